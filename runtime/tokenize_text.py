"""Tokenizes text for `convgate --data text:` with a Hugging Face tokenizer.json.

Usage: tokenize_text.py TOKENIZER_JSON TEXT_FILE OUT_JSONL

TEXT_FILE holds one text per non-empty line. OUT_JSONL's first line is the tokenizer's pad id
({"pad_id": N}, null when it has none); each text then becomes one line: the token ids the
tokenizer gives it, special tokens included ({"ids": [...]}). Run by convgate with the project's
venv python (the pinned `tokenizers` package); a failure prints one line to stderr and exits 1.
"""

import json
import sys


def pad_id(tokenizer):
    """The id the tokenizer pads with: its padding setting, else a pad token it knows."""
    if tokenizer.padding:
        return tokenizer.padding.get("pad_id")
    for token in ("[PAD]", "<pad>", "<|pad|>", "<PAD>"):
        found = tokenizer.token_to_id(token)
        if found is not None:
            return found
    return None


def main():
    if len(sys.argv) != 4:
        print("usage: tokenize_text.py TOKENIZER_JSON TEXT_FILE OUT_JSONL", file=sys.stderr)
        return 2
    tokenizer_path, text_path, out_path = sys.argv[1:]
    try:
        from tokenizers import Tokenizer
    except ImportError as error:
        print(f"the venv has no tokenizers package ({error}): run ./scripts/setup.sh",
              file=sys.stderr)
        return 1
    try:
        tokenizer = Tokenizer.from_file(tokenizer_path)
    except Exception as error:  # the package raises plain Exceptions for bad files
        print(f"{tokenizer_path} is not a tokenizer.json the tokenizers package reads: {error}",
              file=sys.stderr)
        return 1
    with open(text_path, encoding="utf-8", errors="strict") as lines, \
            open(out_path, "w", encoding="utf-8") as out:
        out.write(json.dumps({"pad_id": pad_id(tokenizer)}) + "\n")
        try:
            for line in lines:
                text = line.rstrip("\r\n")
                if not text.strip():
                    continue
                out.write(json.dumps({"ids": tokenizer.encode(text).ids}) + "\n")
        except UnicodeDecodeError as error:
            print(f"{text_path} is not UTF-8 text: {error}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
