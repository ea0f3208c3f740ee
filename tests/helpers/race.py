"""The racing agent of the hand-over tests (integration and container): run as the agent uid with
`WORKSPACE TARGET STOPFILE`, it swaps the workspace's directories `d0`…`d7` for symlinks to
TARGET (holding each a moment), prints `racing` after its first swap and the number of swaps when
STOPFILE appears."""

RACER = r"""
import os, sys
ws, target, stop = sys.argv[1], sys.argv[2], sys.argv[3]
names = [os.path.join(ws, f"d{i}") for i in range(8)]
swaps = 0
while not os.path.exists(stop):
    for name in names:
        try:
            os.rename(name, name + ".away")
            os.symlink(target, name)
            for _ in range(2000):  # hold the link a while: widen the window for a walker
                pass
            os.unlink(name)
            os.rename(name + ".away", name)
            swaps += 1
            if swaps == 1:
                print("racing", flush=True)
        except OSError:
            pass
print(swaps)
"""
