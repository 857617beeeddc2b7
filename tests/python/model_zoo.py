"""The models the backend is checked on and benchmarked with: an MLP, a small CNN, a
transformer encoder layer, torchvision's resnet18 and the GPT of `mimic demo` (its tiny size)."""
import torch
from torch import nn


def mlp(dropout=0.0):
    return nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Dropout(dropout), nn.Linear(512, 512),
                         nn.GELU(), nn.Linear(512, 10))


def small_cnn(dropout=0.0):
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, stride=1, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.AvgPool2d(2), nn.Dropout(dropout), nn.Flatten(), nn.Linear(32 * 8 * 8, 10))


def transformer_layer(dropout=0.0):
    return nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=256, dropout=dropout,
                                      batch_first=True)


def benchmark_mlp(dropout=0.0):
    """An MLP of the size the training benchmark times (tens of ms per step on the CPU)."""
    return nn.Sequential(nn.Linear(1024, 2048), nn.ReLU(), nn.Dropout(dropout), nn.Linear(2048, 2048),
                         nn.GELU(), nn.Linear(2048, 10))


def benchmark_transformer_layer(dropout=0.1):
    return nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024, dropout=dropout,
                                      batch_first=True)


def resnet18():
    import torchvision

    return torchvision.models.resnet18(num_classes=10)


def gpt():
    from mimic_cli import demo_config, demo_model

    return demo_model.build_model(demo_config.SIZES["tiny"])


def _gpt_batch():
    """(tokens, next tokens) of the demo's synthetic language: its first batch."""
    from mimic_cli import demo_config, demo_model

    return demo_model.MarkovLanguage(demo_config.SIZES["tiny"]).batch(0, 0, 1)


def _next_token(output, target):
    from mimic_cli import demo_model

    return demo_model.next_token_loss(output, target)


# name -> (model factory, input factory, loss on (output, target), target factory)
def _classify(output, target):
    return nn.functional.cross_entropy(output, target)


def _regress(output, target):
    return nn.functional.mse_loss(output, target)


MODELS = {
    "mlp": (mlp, lambda: torch.randn(32, 256), _classify, lambda: torch.randint(0, 10, (32,))),
    "cnn": (small_cnn, lambda: torch.randn(8, 3, 32, 32), _classify, lambda: torch.randint(0, 10, (8,))),
    "transformer": (transformer_layer, lambda: torch.randn(8, 32, 128), _regress,
                    lambda: torch.randn(8, 32, 128)),
    "benchmark_mlp": (benchmark_mlp, lambda: torch.randn(256, 1024), _classify,
                      lambda: torch.randint(0, 10, (256,))),
    "benchmark_transformer": (benchmark_transformer_layer, lambda: torch.randn(16, 128, 256), _regress,
                              lambda: torch.randn(16, 128, 256)),
    "resnet18": (resnet18, lambda: torch.randn(4, 3, 96, 96), _classify, lambda: torch.randint(0, 10, (4,))),
    "gpt": (gpt, lambda: _gpt_batch()[0], _next_token, lambda: _gpt_batch()[1]),
}


def optimizer(name, parameters):
    """The optimiser a model trains with: SGD with momentum for the MLP and the convolutional
    models, AdamW for the transformers (the demo's, at its learning rate)."""
    if name in ("transformer", "benchmark_transformer", "gpt"):
        return torch.optim.AdamW(parameters, lr=1e-2)
    return torch.optim.SGD(parameters, lr=0.05, momentum=0.9)


def make(name, seed=0, **kwargs):
    """The model, an input batch and a target, all on the CPU, the same for the same seed."""
    factory, inputs, _, targets = MODELS[name]
    torch.manual_seed(seed)
    return factory(**kwargs), inputs(), targets()


def loss_of(name, output, target):
    return MODELS[name][2](output, target)


def train_step(name, model, optimizer, x, target):
    optimizer.zero_grad()
    output = model(x)
    loss = loss_of(name, output, target)
    loss.backward()
    optimizer.step()
    return output, loss
