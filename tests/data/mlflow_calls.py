# SPDX-License-Identifier: GPL-3.0-or-later
"""MLflow's fluent calls a script makes beside its metrics, and Lightning's MLFlowLogger (its own
MlflowClient, log_batch), for tests/integration/tst_sweep_mlflow.cpp. Knows nothing of Orrery.

    python mlflow_calls.py fluent      log_params, set_tags, log_text, log_figure, log_image with a
                                       key and step (MLflow's async writer), log_image to a file
    python mlflow_calls.py lightning   Lightning's BoringModel with MLFlowLogger, 4 steps
"""

import sys

import mlflow
import numpy as np


def fluent():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with mlflow.start_run(run_name="calls"):
        mlflow.log_params({"width": 64, "act": "gelu"})
        mlflow.set_tags({"team": "video", "stage": "1"})
        for step in range(5):
            mlflow.log_metric("loss", 1.0 / (step + 1), step=step)
        mlflow.log_text("notes", "notes/readme.txt")
        fig, ax = plt.subplots()
        ax.plot([0, 1], [1, 0])
        mlflow.log_figure(fig, "plots/curve.png")
        mlflow.log_image(np.full((8, 8, 3), 200, dtype=np.uint8), key="sample", step=3)
        mlflow.log_image(np.zeros((8, 8, 3), dtype=np.uint8), artifact_file="static/first.png")
        for epoch in range(2):  # the same file saved again each epoch, logged each time
            fig.savefig("pred.png")
            with open("pred.png", "ab") as f:
                f.write(f"epoch {epoch}".encode())
            mlflow.log_artifact("pred.png", "epochs")


def lightning():
    from lightning.pytorch import Trainer
    from lightning.pytorch.demos.boring_classes import BoringModel
    from lightning.pytorch.loggers import MLFlowLogger

    class Model(BoringModel):
        def training_step(self, batch, batch_idx):
            out = super().training_step(batch, batch_idx)
            self.log("train_loss", out["loss"])
            return out

    logger = MLFlowLogger(experiment_name="boring", tracking_uri="sqlite:///mlflow.db")
    trainer = Trainer(max_steps=4, log_every_n_steps=1, logger=logger, enable_checkpointing=False,
                      enable_progress_bar=False, enable_model_summary=False, limit_val_batches=0)
    trainer.fit(Model())


if __name__ == "__main__":
    {"fluent": fluent, "lightning": lightning}[sys.argv[1]]()
