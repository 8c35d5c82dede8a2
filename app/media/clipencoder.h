// SPDX-License-Identifier: GPL-3.0-or-later
//
// Writes frames (QImages of one size) as an H.264 MP4, as the trainer writes its samples: the
// video grid's "export as MP4". The file appears under its name only when finish() succeeds (it
// is written beside it first), so a cancelled or failed export leaves nothing half-written.
// Not thread-safe; any one thread.
#pragma once

#include "clipdecoder.h"  // MediaError

#include <QImage>
#include <QSize>
#include <QString>

#include <memory>

namespace orrery::media {

class ClipEncoder {
public:
    // Throws MediaError. Odd sizes are padded by one pixel (H.264 in yuv420p needs even ones).
    ClipEncoder(const QString &path, QSize size, int fps);
    ~ClipEncoder();  // without finish(): removes the partial file
    ClipEncoder(const ClipEncoder &) = delete;
    ClipEncoder &operator=(const ClipEncoder &) = delete;

    void add(const QImage &frame);  // scaled to the size if it differs
    void finish();
    int frames() const;

    struct Impl;

private:
    std::unique_ptr<Impl> d;
};

}  // namespace orrery::media
