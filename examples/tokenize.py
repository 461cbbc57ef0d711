"""A CPU-only example for machines without the CUDA toolkit: a request loop that
tokenises text in pure Python, reads and writes a file and sleeps between requests.
scripts/demo.sh profiles it when the simulated GPU is not built."""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
from inferscope import scope, mark  # noqa: E402

TEXT = " ".join("token%d" % (i % 997) for i in range(20000))


@scope("tokenize")
def tokenize(text):
    vocab = {}
    return [vocab.setdefault(w.lower().strip(".,"), len(vocab)) for w in text.split()]


def main():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "requests.txt")
        for request in range(20):
            with scope("request"):
                with open(path, "w") as f:
                    f.write(TEXT)
                with open(path) as f:
                    ids = tokenize(f.read())
                time.sleep(0.005)
                mark("request_done", tokens=len(ids))
    print("served 20 requests")


if __name__ == "__main__":
    main()
