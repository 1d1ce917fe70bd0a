# Source: https://github.com/rasbt/LLMs-from-scratch/blob/28c65cdfbc3338e2e040016eea4b7fdf556e4d57/appendix-A/01_main-chapter-code/code-part1.ipynb, section A.5 "Implementing multilayer neural networks" (Build a Large Language Model From Scratch, appendix A)
# Licence: Apache-2.0 (Copyright 2023-2026 Sebastian Raschka, LLMs-from-scratch)
# Edits:
#   - the code cells of section A.5 joined in order, after the notebook's `import torch` (cell 3 without its version print)
#   - added `torch.manual_seed(0)` after the import, before the first model's random initialization
import torch

torch.manual_seed(0)

class NeuralNetwork(torch.nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super().__init__()

        self.layers = torch.nn.Sequential(
                
            # 1st hidden layer
            torch.nn.Linear(num_inputs, 30),
            torch.nn.ReLU(),

            # 2nd hidden layer
            torch.nn.Linear(30, 20),
            torch.nn.ReLU(),

            # output layer
            torch.nn.Linear(20, num_outputs),
        )

    def forward(self, x):
        logits = self.layers(x)
        return logits

model = NeuralNetwork(50, 3)

print(model)

num_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
print("Total number of trainable model parameters:", num_params)

print(model.layers[0].weight)

torch.manual_seed(123)

model = NeuralNetwork(50, 3)
print(model.layers[0].weight)

print(model.layers[0].weight.shape)

torch.manual_seed(123)

X = torch.rand((1, 50))
out = model(X)
print(out)

with torch.no_grad():
    out = model(X)
print(out)

with torch.no_grad():
    out = torch.softmax(model(X), dim=1)
print(out)
