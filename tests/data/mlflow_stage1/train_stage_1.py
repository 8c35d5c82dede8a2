# SPDX-License-Identifier: GPL-3.0-or-later
"""A stage-1 trainer in the shape of the video-generation walkthrough Orrery grew from
(Moore-AnimateAnyone's train_stage_1.py, Apache-2.0, whose own file needs CUDA and Stable
Diffusion weights): accelerate with the MLflow tracker and `project_dir="./mlruns"`, one YAML config
(`--config ./configs/train/stage1.yaml`), checkpoints in `output_dir: ./exp_output` (older ones
deleted, the latest resumed), `mlflow.log_dict` of the config, `accelerator.log` at the global
step, and a validation GIF written into a TemporaryDirectory and handed to `mlflow.log_artifact`.

Written for tests/integration/tst_sweep_mlflow.cpp, and nothing in it knows Orrery: what the test
checks is what accelerate and MLflow do with it. A tiny model on CPU stands in for the UNets.
"""

import argparse
import os
import shutil
import tempfile

import mlflow
import torch
import yaml
from accelerate import Accelerator
from PIL import Image


def save_videos_grid(frames, path):
    images = [Image.fromarray(f) for f in frames]
    images[0].save(path, save_all=True, append_images=images[1:], duration=100, loop=0)


def main(cfg):
    accelerator = Accelerator(log_with="mlflow", project_dir="./mlruns", cpu=True)
    if accelerator.is_main_process:
        accelerator.init_trackers(cfg["exp_name"])  # the seed names the experiment after the run
        mlflow.log_dict(cfg, "config.yaml")
    torch.manual_seed(cfg["seed"])
    net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 16))
    optimizer = torch.optim.AdamW(net.parameters(), lr=float(cfg["solver"]["learning_rate"]))
    net, optimizer = accelerator.prepare(net, optimizer)
    save_dir = os.path.join(cfg["output_dir"], cfg["exp_name"])
    os.makedirs(save_dir, exist_ok=True)

    global_step = 0
    checkpoints = sorted((d for d in os.listdir(save_dir) if d.startswith("checkpoint")),
                         key=lambda d: int(d.split("-")[1]))
    if checkpoints:  # resume_from_checkpoint: latest, as the seed does
        accelerator.load_state(os.path.join(save_dir, checkpoints[-1]))
        global_step = int(checkpoints[-1].split("-")[1])
        accelerator.print(f"resumed from {checkpoints[-1]}")

    target = torch.randn(16, 16)
    while global_step < cfg["solver"]["max_train_steps"]:
        x = torch.randn(cfg["data"]["train_bs"], 16)
        loss = ((net(x) - x @ target) ** 2).mean()
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        global_step += 1
        accelerator.log({"train_loss": loss.item()}, step=global_step)

        if global_step % cfg["checkpointing_steps"] == 0 and accelerator.is_main_process:
            accelerator.save_state(os.path.join(save_dir, f"checkpoint-{global_step}"))
            for old in sorted(os.listdir(save_dir))[: -cfg["save_limit"]]:  # delete old checkpoints
                if old.startswith("checkpoint") and old != f"checkpoint-{global_step}":
                    shutil.rmtree(os.path.join(save_dir, old), ignore_errors=True)

        if global_step % cfg["val"]["validation_steps"] == 0 and accelerator.is_main_process:
            with torch.no_grad():
                y = net(torch.linspace(-1, 1, 16).repeat(4, 1))
            frames = [((torch.sigmoid(y[i]).reshape(4, 4, 1).repeat(8, 8, 3)) * 255).byte().numpy()
                      for i in range(4)]
            with tempfile.TemporaryDirectory() as temp_dir:
                out_file = os.path.join(temp_dir, f"{global_step:06d}.gif")
                save_videos_grid(frames, out_file)
                mlflow.log_artifact(out_file)

    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", type=str, default="./configs/train/stage1.yaml")
    args = parser.parse_args()
    with open(args.config) as f:
        main(yaml.safe_load(f))
