#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The peer of orrery-train's throughput benchmark: the same video UNet (or DiT) and the same
training step in eager PyTorch (Python), as a researcher would write it.

model.arch dit: the video DiT of trainer/src/dit.cpp, layer for layer (patch embedding Linear,
sin-cos space and time positions, adaLN-Zero blocks with fused QKV, factorised or full attention).
Otherwise the same architecture as trainer/src/model.cpp (patchify, per-frame ResBlocks with scale-shift
embedding, spatial attention at the configured levels, zero-initialised temporal attention at
every level, skips), same rectified-flow loss and preconditioning with logit-normal times, same AdamW (fused=True),
gradient clipping and EMA, bf16 autocast on CUDA. Data are random tensors of the clip shape
(orrery-train's loader runs on worker threads and is measured separately as data-wait), so this
measures the model step only, which favours the peer.

Usage: trainer_peer.py --config tiny.yaml [--steps N] [--warmup N] [--device cpu|cuda] [--compile]
Prints one JSON line: parameters, samples/s, step time, the FLOPs of one training step and the
peak device memory. --compile runs the model through torch.compile (the warm-up steps compile).

FLOPs: torch.utils.flop_counter.FlopCounterMode over one real training step of this model (forward
and backward of every matrix product, convolution and attention; elementwise work, norms and the
optimizer are not counted, as in the usual MFU definition). The model is orrery-train's, layer for
layer (the parameter counts are compared by bench/trainer.sh), so the count is also orrery-train's.
"""
import argparse
import json
import math
import resource
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import yaml  # noqa: F401  (not in the torch venv; configs are tiny enough to parse by hand)
except ImportError:
    yaml = None


def load_config(path):
    """The few keys we need from an orrery-train YAML (flat 'section: / key: value' files)."""
    cfg = {"model.channels": 32, "model.channel_mult": [1, 2], "model.patch": 2, "model.res_blocks": 1,
           "model.attn_levels": [1], "model.temporal_layers": 1, "model.heads": 4, "data.frames": 8,
           "data.size": 32, "data.classes": 8, "train.batch_size": 8, "model.data_mean": -0.92,
           "model.data_std": 0.35, "model.arch": "unet", "model.depth": 4, "model.patch_t": 1,
           "model.mlp_ratio": 4.0, "model.attention": "factorised"}
    section = None
    for raw in open(path):
        line = raw.split("#")[0].rstrip()
        if not line.strip():
            continue
        if not line.startswith(" ") and line.endswith(":"):
            section = line[:-1]
            continue
        key, _, value = line.strip().partition(":")
        value = value.strip()
        full = f"{section}.{key}" if section else key
        if value.startswith("["):
            cfg[full] = [int(x) for x in value.strip("[]").split(",") if x.strip()]
        else:
            try:
                cfg[full] = int(value)
            except ValueError:
                try:
                    cfg[full] = float(value)
                except ValueError:
                    cfg[full] = value
    # bench/trainer.sh runs orrery-train without these (they are not mirrored here).
    for key in ("model.pixel_head", "model.local_mixing", "model.prediction"):
        cfg.pop(key, None)
    return cfg


def groups(c):
    for g in (32, 16, 8, 4, 2, 1):
        if c % g == 0 and c // g >= 2:
            return g
    return 1


def sinusoidal(pos, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, device=pos.device, dtype=torch.float32) / half)
    args = pos.float()[:, None] * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], 1)


class ResBlock(nn.Module):
    def __init__(self, cin, cout, emb):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups(cin), cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.emb_proj = nn.Linear(emb, 2 * cout)
        self.norm2 = nn.GroupNorm(groups(cout), cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        nn.init.zeros_(self.conv2.weight)
        nn.init.zeros_(self.conv2.bias)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else None

    def forward(self, x, emb):
        h = self.conv1(F.silu(self.norm1(x)))
        scale, shift = self.emb_proj(F.silu(emb))[:, :, None, None].chunk(2, 1)
        h = self.norm2(h) * (1 + scale) + shift
        h = self.conv2(F.silu(h))
        return (self.skip(x) if self.skip is not None else x) + h


class SpatialAttention(nn.Module):
    def __init__(self, c, heads):
        super().__init__()
        self.heads = heads
        self.norm = nn.GroupNorm(groups(c), c)
        self.qkv = nn.Conv2d(c, 3 * c, 1)
        self.proj = nn.Conv2d(c, c, 1)
        nn.init.zeros_(self.proj.weight)
        nn.init.zeros_(self.proj.bias)

    def forward(self, x):
        # As orrery-train: the 1x1 convolutions as Linears over tokens, so that q, k, v have each
        # head's features contiguous and SDPA may pick a flash kernel rather than math.
        n, c, h, w = x.shape
        tokens = self.norm(x).flatten(2).transpose(1, 2)
        q = F.linear(tokens, self.qkv.weight.flatten(1), self.qkv.bias)
        q = q.view(n, h * w, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        o = F.scaled_dot_product_attention(q[0], q[1], q[2])
        out = F.linear(o.transpose(1, 2).reshape(n, h * w, c), self.proj.weight.flatten(1), self.proj.bias)
        return x + out.transpose(1, 2).reshape(n, c, h, w)


class TemporalAttention(nn.Module):
    def __init__(self, c, heads, frames):
        super().__init__()
        self.heads = heads
        self.norm = nn.GroupNorm(groups(c), c)
        self.qkv = nn.Linear(c, 3 * c)
        self.proj = nn.Linear(c, c)
        nn.init.zeros_(self.proj.weight)
        nn.init.zeros_(self.proj.bias)
        self.register_buffer("frame_pos", sinusoidal(torch.arange(frames), c))

    def forward(self, x, frames):
        n, c, h, w = x.shape
        b = n // frames
        seq = self.norm(x).reshape(b, frames, c, h, w).permute(0, 3, 4, 1, 2).reshape(b * h * w, frames, c)
        seq = seq + self.frame_pos[:frames].to(seq.dtype)
        q = self.qkv(seq).reshape(b * h * w, frames, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        o = F.scaled_dot_product_attention(q[0], q[1], q[2])
        o = self.proj(o.permute(0, 2, 1, 3).reshape(b * h * w, frames, c))
        return x + o.reshape(b, h, w, frames, c).permute(0, 3, 4, 1, 2).reshape(n, c, h, w)


class Block(nn.Module):
    def __init__(self, cin, cout, emb, spatial, temporal, heads, frames):
        super().__init__()
        self.res = ResBlock(cin, cout, emb)
        self.attn = SpatialAttention(cout, heads) if spatial else None
        self.temporal = nn.ModuleList([TemporalAttention(cout, heads, frames) for _ in range(temporal)])

    def forward(self, x, emb, frames):
        x = self.res(x, emb)
        if self.attn is not None:
            x = self.attn(x)
        for t in self.temporal:
            x = t(x, frames)
        return x


class VideoUNet(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        ch, mult, p = cfg["model.channels"], cfg["model.channel_mult"], cfg["model.patch"]
        emb, heads, frames = 4 * ch, cfg["model.heads"], cfg["data.frames"]
        attn, tl, rb = set(cfg["model.attn_levels"]), cfg["model.temporal_layers"], cfg["model.res_blocks"]
        self.ch, self.patch, self.rb, self.levels = ch, p, rb, len(mult)
        self.mean, self.std = cfg["model.data_mean"], cfg["model.data_std"]
        self.conv_in = nn.Conv2d(3 * p * p, ch, 3, padding=1)
        self.time1, self.time2 = nn.Linear(ch, emb), nn.Linear(emb, emb)
        self.class_emb = nn.Embedding(cfg["data.classes"] + 1, emb)
        self.down, self.downsample, self.up, self.upsample = nn.ModuleList(), nn.ModuleList(), nn.ModuleList(), nn.ModuleList()
        skips, cur = [ch], ch
        for lvl, m in enumerate(mult):
            for _ in range(rb):
                self.down.append(Block(cur, ch * m, emb, lvl in attn, tl, heads, frames))
                cur = ch * m
                skips.append(cur)
            if lvl + 1 < len(mult):
                self.downsample.append(nn.Conv2d(cur, cur, 3, stride=2, padding=1))
                skips.append(cur)
        self.mid = nn.ModuleList([Block(cur, cur, emb, True, tl, heads, frames), Block(cur, cur, emb, False, 0, heads, frames)])
        for lvl in reversed(range(len(mult))):
            for _ in range(rb + 1):
                self.up.append(Block(cur + skips.pop(), ch * mult[lvl], emb, lvl in attn, tl, heads, frames))
                cur = ch * mult[lvl]
            if lvl > 0:
                self.upsample.append(nn.Conv2d(cur, cur, 3, padding=1))
        self.norm_out = nn.GroupNorm(groups(cur), cur)
        self.conv_out = nn.Conv2d(cur, 3 * p * p, 3, padding=1)
        nn.init.zeros_(self.conv_out.weight)
        nn.init.zeros_(self.conv_out.bias)

    def forward(self, x, t, labels):
        # EDM preconditioning written for rectified flow, as orrery-train's model.precondition.
        tb = t.float().view(-1, 1, 1, 1, 1)
        var = (1 - tb).square() * self.std**2 + tb.square()
        c_in, c_skip = var.rsqrt(), (tb - (1 - tb) * self.std**2) / var
        centred = x.float() - (1 - tb) * self.mean
        f = self.network(centred * c_in, t, labels).float()
        return c_skip * centred + self.std * c_in * f - self.mean

    def network(self, x, t, labels):
        b, c, frames, h, w = x.shape
        x = x.permute(0, 2, 1, 3, 4).reshape(b * frames, c, h, w)
        if self.patch > 1:
            x = F.pixel_unshuffle(x, self.patch)
        emb = self.time2(F.silu(self.time1(sinusoidal(t * 1000.0, self.ch).to(x.dtype)))) + self.class_emb(labels)
        emb = emb.repeat_interleave(frames, 0)
        hcur = self.conv_in(x)
        skips, di = [hcur], 0
        for lvl in range(self.levels):
            for _ in range(self.rb):
                hcur = self.down[di](hcur, emb, frames)
                di += 1
                skips.append(hcur)
            if lvl + 1 < self.levels:
                hcur = self.downsample[lvl](hcur)
                skips.append(hcur)
        for m in self.mid:
            hcur = m(hcur, emb, frames)
        ui, usi = 0, 0
        for lvl in reversed(range(self.levels)):
            for _ in range(self.rb + 1):
                hcur = self.up[ui](torch.cat([hcur, skips.pop()], 1), emb, frames)
                ui += 1
            if lvl > 0:
                hcur = self.upsample[usi](F.interpolate(hcur, scale_factor=2.0, mode="nearest"))
                usi += 1
        out = self.conv_out(F.silu(self.norm_out(hcur)))
        if self.patch > 1:
            out = F.pixel_shuffle(out, self.patch)
        return out.reshape(b, frames, c, h, w).permute(0, 2, 1, 3, 4)


def modulate(x, shift, scale):
    return F.layer_norm(x, (x.shape[-1],), eps=1e-6) * (1 + scale) + shift


def xavier(linear):
    nn.init.xavier_uniform_(linear.weight)
    nn.init.zeros_(linear.bias)
    return linear


def zero(module):
    for p in module.parameters():
        nn.init.zeros_(p)
    return module


class DiTAttention(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.qkv, self.proj = xavier(nn.Linear(width, 3 * width)), xavier(nn.Linear(width, width))

    def forward(self, x):
        n, l, w = x.shape
        q = self.qkv(x).view(n, l, 3, self.heads, w // self.heads).permute(2, 0, 3, 1, 4)
        o = F.scaled_dot_product_attention(q[0], q[1], q[2])
        return self.proj(o.transpose(1, 2).reshape(n, l, w))


class DiTBlock(nn.Module):
    def __init__(self, width, heads, mlp_ratio, full):
        super().__init__()
        self.full = full
        self.attn = DiTAttention(width, heads)
        self.temporal = None if full else DiTAttention(width, heads)
        hidden = int(width * mlp_ratio)
        self.fc1, self.fc2 = xavier(nn.Linear(width, hidden)), xavier(nn.Linear(hidden, width))
        self.ada_ln = zero(nn.Linear(width, (6 if full else 9) * width))

    def forward(self, x, c):
        b, frames, s, w = x.shape
        m = self.ada_ln(F.silu(c)).view(b, 1, 1, -1).chunk(6 if self.full else 9, -1)
        h = modulate(x, m[0], m[1])
        h = self.attn(h.view(b, frames * s, w) if self.full else h.view(b * frames, s, w)).view(x.shape)
        out, nxt = x + m[2] * h, 3
        if not self.full:
            h = modulate(out, m[3], m[4]).transpose(1, 2).reshape(b * s, frames, w)
            out = out + m[5] * self.temporal(h).view(b, s, frames, w).transpose(1, 2)
            nxt = 6
        h = self.fc2(F.gelu(self.fc1(modulate(out, m[nxt], m[nxt + 1])), approximate="tanh"))
        return out + m[nxt + 2] * h


def space_positions(rows, cols, width, device):
    r = torch.arange(rows, device=device).repeat_interleave(cols)
    c = torch.arange(cols, device=device).repeat(rows)
    return torch.cat([sinusoidal(r, width // 2), sinusoidal(c, width // 2)], 1)


class VideoDiT(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        w, p, pt = cfg["model.channels"], cfg["model.patch"], cfg["model.patch_t"]
        self.w, self.p, self.pt = w, p, pt
        self.mean, self.std = cfg["model.data_mean"], cfg["model.data_std"]
        self.patch_embed = xavier(nn.Linear(3 * pt * p * p, w))
        self.time1, self.time2 = nn.Linear(w, w), nn.Linear(w, w)
        for lin in (self.time1, self.time2):
            nn.init.normal_(lin.weight, std=0.02)
            nn.init.zeros_(lin.bias)
        self.class_emb = nn.Embedding(cfg["data.classes"] + 1, w)
        # The label keeps nn.Embedding's N(0, 1), as orrery-train's DiT (dit.cpp says why).
        full = cfg["model.attention"] == "full"
        self.blocks = nn.ModuleList([DiTBlock(w, cfg["model.heads"], cfg["model.mlp_ratio"], full)
                                     for _ in range(cfg["model.depth"])])
        self.final_ada_ln = zero(nn.Linear(w, 2 * w))
        self.final_linear = zero(nn.Linear(w, 3 * pt * p * p))

    forward = VideoUNet.forward

    def network(self, x, t, labels):
        b, c, frames, h, wd = x.shape
        p, pt = self.p, self.pt
        tn, hn, wn = frames // pt, h // p, wd // p
        tokens = self.patch_embed(x.reshape(b, c, tn, pt, hn, p, wn, p).permute(0, 2, 4, 6, 1, 3, 5, 7)
                                  .reshape(b, tn, hn * wn, c * pt * p * p))
        pos = space_positions(hn, wn, self.w, x.device)[None] + sinusoidal(torch.arange(tn, device=x.device), self.w)[:, None]
        tokens = tokens + pos.to(tokens.dtype)
        cond = self.time2(F.silu(self.time1(sinusoidal(t * 1000.0, self.w).to(x.dtype)))) + self.class_emb(labels)
        for blk in self.blocks:
            tokens = blk(tokens, cond)
        shift, scale = self.final_ada_ln(F.silu(cond)).view(b, 1, 1, -1).chunk(2, -1)
        out = self.final_linear(modulate(tokens, shift, scale))
        return out.view(b, tn, hn, wn, c, pt, p, p).permute(0, 4, 1, 5, 2, 6, 3, 7).reshape(b, c, frames, h, wd)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--compile", action="store_true", help="torch.compile the model")
    ap.add_argument("--profile", action="store_true", help="print the top CUDA ops of the timed steps (stderr)")
    ap.add_argument("--trace", metavar="PATH", help="also write the timed steps' Chrome trace, marked as "
                    "orrery-train marks its own (bench/profile_families.py reads both)")
    args = ap.parse_args()
    cfg = load_config(args.config)
    dev = torch.device(args.device)
    torch.manual_seed(0)
    model = (VideoDiT if cfg["model.arch"] == "dit" else VideoUNet)(cfg).to(dev)
    ema = [p.detach().clone() for p in model.parameters()]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.99), weight_decay=0.01, fused=True)
    b, f, s = cfg["train.batch_size"], cfg["data.frames"], cfg["data.size"]
    bf16 = dev.type == "cuda"
    x0 = torch.randn(b, 3, f, s, s, device=dev)
    noise = torch.randn_like(x0)
    labels = torch.randint(0, cfg["data.classes"] + 1, (b,), device=dev)

    mark = torch.profiler.record_function  # orrery-train's marks (trainer/src/profile.h)

    def step():
        with mark("orrery::step"):
            t = torch.sigmoid(torch.randn(b, device=dev))
            tb = t.view(-1, 1, 1, 1, 1)
            with mark("orrery::forward"), torch.autocast(dev.type, dtype=torch.bfloat16, enabled=bf16):
                v = model((1 - tb) * x0 + tb * noise, t, labels)
            loss = F.mse_loss(v.float(), noise - x0)
            with mark("orrery::backward"):
                loss.backward()
            with mark("orrery::optimizer"):
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
                opt.step()
                opt.zero_grad(set_to_none=False)
                with torch.no_grad():
                    torch._foreach_lerp_(ema, list(model.parameters()), 1 - 0.999)
            return loss.detach()

    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with counter:
        step()
    flops = counter.get_total_flops()
    fwd = model
    if args.compile:
        model = torch.compile(model)
    for _ in range(args.warmup):
        step()
    if dev.type == "cuda":
        torch.cuda.synchronize()
    prof = None
    if args.profile or args.trace:
        acts = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if dev.type == "cuda" else [])
        prof = torch.profiler.profile(activities=acts)
        prof.__enter__()
    t0 = time.perf_counter()
    for _ in range(args.steps):
        step()
    if dev.type == "cuda":
        torch.cuda.synchronize()
    dt = (time.perf_counter() - t0) / args.steps
    if prof:
        prof.__exit__(None, None, None)
        if args.trace:
            prof.export_chrome_trace(args.trace)
        if args.profile:
            key = "self_cuda_time_total" if dev.type == "cuda" else "self_cpu_time_total"
            print(prof.key_averages().table(sort_by=key, row_limit=25), file=sys.stderr)
    peak = torch.cuda.max_memory_allocated(dev) / 1e9 if dev.type == "cuda" else None
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6  # kB on Linux
    print(json.dumps({"peer": "pytorch-compile" if args.compile else "pytorch-eager",
                      "parameters": sum(p.numel() for p in fwd.parameters()), "samples_per_s": b / dt,
                      "step_time_s": dt, "flops_per_step": flops, "tflops": flops / dt / 1e12,
                      "peak_mem_gb": peak, "peak_rss_gb": rss, "device": torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu",
                      "torch": torch.__version__}))


if __name__ == "__main__":
    main()
