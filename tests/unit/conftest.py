# Make `ansible_collections.aifabric.roce` importable from a plain checkout (see Makefile setup).
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LINK_ROOT = os.path.join(ROOT, ".collections")
if not os.path.isdir(os.path.join(LINK_ROOT, "ansible_collections", "aifabric", "roce")):
    os.makedirs(os.path.join(LINK_ROOT, "ansible_collections", "aifabric"), exist_ok=True)
    os.symlink("../../..", os.path.join(LINK_ROOT, "ansible_collections", "aifabric", "roce"))
if LINK_ROOT not in sys.path:
    sys.path.insert(0, LINK_ROOT)
