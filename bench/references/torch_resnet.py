"""ResNet-18 as a PyTorch user writes it (torchvision's ``resnet18`` layer for
layer: bias-free 3×3 convolutions, ``nn.BatchNorm2d``, the 7×7 stem and max
pool, 1×1 downsampling), a plain eager loop with ``torch.optim.AdamW``,
NCHW as torchvision's default: 11,181,642 parameters at 10 classes, as the
studio's ``resnet18``.

    python bench/references/torch_resnet.py [--batch 8] [--steps 20] [--threads 1]
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from timing import arguments, measure, report


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + (x if self.downsample is None else self.downsample(x)))


class ResNet18(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1)
        )
        blocks, cin = [], 64
        for i, width in enumerate([64, 128, 256, 512]):
            for j in range(2):
                blocks.append(BasicBlock(cin, width, 2 if i > 0 and j == 0 else 1))
                cin = width
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.blocks(self.stem(x)), 1), 1))


def main():
    a = arguments(batch=8).parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = ResNet18(a.classes).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.05)
    x = torch.randn(a.batch, 3, 224, 224)
    y = torch.randint(0, a.classes, (a.batch,))

    def step():
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    result = measure(step, lambda loss: loss.item(), a)
    report("pytorch", "resnet18", sum(p.numel() for p in model.parameters()), a, result, version=torch.__version__)


if __name__ == "__main__":
    main()
