# SPDX-License-Identifier: MIT
# A PyTorch CPU inference loop as the issue describes it: a pure-Python tokenizer runs
# in DataLoader workers (forked processes) and a small transformer encoder's forward
# runs in the main thread. Needs torch (Debian's python3-torch).
#
#   python3 torch_loop.py [num_workers] [batches]
import sys

import torch
from torch.utils.data import DataLoader, Dataset

WORDS = ("the quick brown fox jumps over a lazy dog while seven profilers watch the "
         "tensor cores idle and the tokenizer splits every word into pieces").split()
VOCAB = 4096
SEQ = 64


def tokenize(text):
    """Pure Python: split into words, then greedy sub-word pieces hashed into ids."""
    ids = []
    for word in text.lower().split():
        start = 0
        while start < len(word):
            end = len(word)
            while end > start + 1 and (end - start) > 4:
                end -= 1
            piece = word[start:end]
            h = 2166136261
            for ch in piece:
                h = ((h ^ ord(ch)) * 16777619) & 0xFFFFFFFF
            ids.append(h % VOCAB)
            start = end
    ids = (ids + [0] * SEQ)[:SEQ]
    return ids


class Texts(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        words = [WORDS[(i * 7 + k * 13) % len(WORDS)] for k in range(9000)]
        ids = tokenize(" ".join(words))
        return torch.tensor(ids, dtype=torch.long)


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, 64)
        layer = torch.nn.TransformerEncoderLayer(64, 4, 256, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

    def forward(self, ids):
        return self.encoder(self.embed(ids)).mean(dim=1)


def main():
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    batches = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Encoder().eval()
    loader = DataLoader(Texts(batches * 8), batch_size=8, num_workers=workers)
    total = 0.0
    with torch.inference_mode():
        for ids in loader:
            total += float(model(ids).sum())
    print(f"batches {batches} workers {workers} checksum {total:.3f}")


if __name__ == "__main__":
    main()
