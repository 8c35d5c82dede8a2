// SPDX-License-Identifier: GPL-3.0-or-later
//
// Evaluation, so that comparing runs means something:
//   eval/loss_t<t>, eval/loss  held-out denoising loss at fixed flow times (fixed clips and noise);
//   eval/sample_*              sample quality on the synthetic data: for a generated clip of label
//                              L, find the object in each frame (pixels clearly above the black
//                              background) and compare with what L means and with real clips:
//     presence      fraction of frames with an object of plausible size
//     colour_error  distance of the object's mean colour to L's colour (RGB in [0, 1])
//     shape_error   |fill ratio of its bounding box - that of real clips of L's shape|
//     area_cv       variation of the object's area across frames (real clips: ~0)
//     motion_jerk   mean |second difference| of its centroid in pixels (constant velocity: ~0)
//     score         presence x exp(-colour/0.15) x exp(-shape/0.15) x exp(-area_cv/0.25), in [0, 1]
//   eval/data_score  the same score of real clips: the ceiling (logged with every evaluation).
#pragma once

#include "config.h"
#include "data.h"
#include "model.h"

#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

namespace orrery::train {

struct ClipQuality {
    double presence = 0, colourError = 0, shapeError = 0, areaCv = 0, motionJerk = 0, score = 0;
    // Diagnostics (not in the score): the colour of the object's body alone (its pixels at least
    // 0.6 bright, so a soft edge does not count), and the share of the object's pixels in its
    // largest 8-connected part (1: one object; scattered bright patches: far less). Both over the
    // frames where the object is present.
    double coreColourError = 0, cohesion = 0;
};

// Scores one clip in [-1, 1] [3, T, H, W] against what `label` means; `expectedFill` is the mean
// bounding-box fill ratio of real clips of that shape.
ClipQuality scoreClip(const torch::Tensor &clip, std::int64_t label, double expectedFill);

class Evaluator {
public:
    // `clips`: the data's clips (empty: moving shapes). Sample quality is scored on moving shapes
    // only (it knows what their labels mean); real data get the held-out loss.
    Evaluator(const Config &c, const ShapesSpec &spec, const torch::Device &device, ClipSource clips = {});
    // sample.count clips (labels 0, 1, 2, ... mod classes) from fixed noise, with the sampler.
    torch::Tensor samples(DenoiserImpl &model, std::int64_t count);
    std::vector<std::pair<std::string, double>> evaluate(DenoiserImpl &model);

private:
    const Config &m_c;
    ShapesSpec m_spec;
    torch::Device m_device;
    ClipSource m_clips;
    std::vector<double> m_fill;  // per shape, from real clips
    double m_dataScore = 0;
};

}  // namespace orrery::train
