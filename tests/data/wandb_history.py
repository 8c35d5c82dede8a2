# SPDX-License-Identifier: GPL-3.0-or-later
"""Prints the history rows of W&B's offline run file (run-*.wandb) as JSON, one row a line.

The file is W&B's own record log (a LevelDB-style log of 32 KiB blocks, each record a 7-byte
header: crc32, length, type; after a 7-byte file header) holding wandb_internal_pb2.Record
messages; the history records are what `wandb sync` would upload. tst_sweep_launch compares them
with what Orrery's capture recorded.

    python wandb_history.py RUN.wandb
"""

import json
import struct
import sys

from wandb.proto import wandb_internal_pb2 as pb

raw = open(sys.argv[1], "rb").read()
BLOCK, pos, pending = 32768, 7, b""
while pos + 7 <= len(raw):
    left = BLOCK - pos % BLOCK
    if left < 7:
        pos += left
        continue
    _crc, length, kind = struct.unpack("<IHB", raw[pos:pos + 7])
    pos += 7
    pending += raw[pos:pos + length]
    pos += length
    if kind == 0:
        break
    if kind not in (1, 4):  # FIRST or MIDDLE: more of the record follows
        continue
    record = pb.Record()
    record.ParseFromString(pending)
    pending = b""
    if record.WhichOneof("record_type") == "history":
        row = {}
        for item in record.history.item:
            row[item.key or "/".join(item.nested_key)] = json.loads(item.value_json)
        print(json.dumps(row))
