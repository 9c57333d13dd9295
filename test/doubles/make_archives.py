"""Write small files shaped like each kind of model file trtx must tell apart.

Used by trtx's bridge tests (no torch here): only the zip layout and magic
bytes matter to the bridge's sniffer, never the payload.
  python3 make_archives.py OUT_DIR
"""

import os
import sys
import zipfile


def _zip(path, records):
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in records.items():
            archive.writestr(name, data)


def main(out):
    os.makedirs(out, exist_ok=True)
    # torch.export.save (PT2 archive layout)
    _zip(
        os.path.join(out, "model.pt2"),
        {
            "model/archive_format": "pt2",
            "model/archive_version": "0",
            "model/models/model.json": "{}",
            "model/data/weights/model.pt": "",
        },
    )
    # The same kind of archive under another extension: the sniffer reads content.
    _zip(os.path.join(out, "model.ep"), {"serialized_exported_program.json": "{}", "version": "1"})
    # torch.jit.save
    _zip(
        os.path.join(out, "scripted.pt"),
        {"scripted/data.pkl": b"\x80\x02}q\x00.", "scripted/constants.pkl": b"\x80\x02).", "scripted/code/__torch__.py": ""},
    )
    # torch.save of a module (zip serialization)
    _zip(os.path.join(out, "pickled.pt"), {"pickled/data.pkl": b"\x80\x02}q\x00.", "pickled/version": "3"})
    # torch.save with the legacy serializer: a raw pickle
    with open(os.path.join(out, "legacy.pt"), "wb") as handle:
        handle.write(b"\x80\x02\x8a\nl\xfc\x9cF\xf9 j\xa8P\x19.")
    # an AOTInductor package: a PT2 archive with no ExportedProgram
    _zip(os.path.join(out, "aoti.pt2"), {"aoti/archive_format": "pt2", "aoti/data/aotinductor/model/model.so": ""})
    with open(os.path.join(out, "notes.txt"), "w") as handle:
        handle.write("not a model\n")


if __name__ == "__main__":
    main(sys.argv[1])
