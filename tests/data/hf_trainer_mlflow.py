# SPDX-License-Identifier: GPL-3.0-or-later
"""An HF Trainer script as the transformers examples are written (HfArgumentParser over
TrainingArguments, `--report_to mlflow`), on a tiny randomly initialised GPT-2 and random tokens,
so it needs no hub download. Nothing in it knows Orrery: what tests/integration/tst_sweep_mlflow.cpp
checks is what transformers' own MLflowCallback (on accelerate's PartialState) does with it.
"""

import torch
from transformers import GPT2Config, GPT2LMHeadModel, HfArgumentParser, Trainer, TrainingArguments


class Tokens(torch.utils.data.Dataset):
    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(0, 64, (n, 32), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def main():
    (args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()
    model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_head=2, n_embd=32, n_positions=64, vocab_size=64))
    trainer = Trainer(model=model, args=args, train_dataset=Tokens(64, 0), eval_dataset=Tokens(16, 1))
    trainer.train()
    trainer.evaluate()


if __name__ == "__main__":
    main()
