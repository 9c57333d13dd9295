"""Writes a program back from its skeleton and recipe (skeleton.ts), on the GPU machine.

    python3 inflate.py NAME.recipe.json NAME.skeleton OUT.pte

Every weight the recipe names is made again from its seed (hash_fill.py);
every other byte comes from the skeleton, in file order. The result's sha256
must be the recipe's: the program is the one exported on the CPU machine.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hash_fill

WIDTH = {"float32": 4, "bfloat16": 2, "float16": 2}


def main(recipe_path: str, skeleton_path: str, out_path: str) -> int:
    recipe = json.loads(Path(recipe_path).read_text())
    h = hashlib.sha256()
    at = 0
    with open(skeleton_path, "rb") as skeleton, open(out_path, "wb") as out:

        def put(data: bytes) -> None:
            h.update(data)
            out.write(data)

        for f in [*recipe["fills"], {"offset": recipe["size"], "size": 0}]:
            put(skeleton.read(f["offset"] - at))
            if f["size"]:
                for piece in hash_fill.chunks(f["seed"], f["size"] // WIDTH[f["dtype"]], f["dtype"]):
                    put(piece)
            at = f["offset"] + f["size"]
    if h.hexdigest() != recipe["sha256"]:
        print(f"{out_path}: sha256 {h.hexdigest()} is not the recipe's {recipe['sha256']}", file=sys.stderr)
        return 1
    print(f"{out_path}: {recipe['size']} bytes, sha256 {recipe['sha256'][:16]}... as exported")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
