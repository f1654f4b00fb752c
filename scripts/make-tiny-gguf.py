#!/usr/bin/env python3
"""Writes the tiny model the real-server tests serve with llama.cpp (docs/develop/checks.md).

A LLaMA-architecture GGUF with random weights, deterministic from a seed: 2 layers, 128 wide,
4 heads, a SentencePiece-style vocabulary (control tokens, the 256 byte tokens, single
characters and common code words, each a whole piece), and a plain Jinja chat template. The
output rows of the control and byte tokens are zero, so greedy decoding never picks them: every
answer runs to `max_tokens`, one whole-piece token per streamed event. Nothing is downloaded;
the `gguf` package from PyPI writes the file.

Usage: make-tiny-gguf.py OUT.gguf [--seed N] [--context N]
"""

import argparse
import string

import gguf
import numpy as np

EMBED = 128
FFN = 256
HEADS = 4
LAYERS = 2

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ message['role'] }}: {{ message['content'] }}\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)

# Words of strobe's prompt filler and of ordinary English, so the tokenizer's characters per
# token are in the range of real ones (about 2 to 4), not one per character.
WORDS = """def return compute helper routine specialist the of and to in is that for it as with was
on be at by this had not are but from or have an they which one you were all we when there can
been has more if no out do so what up its about into than them only other new some could time
these two may first then any like now my over such our man me even most made after also did many
off before must well back through years much where your way down should because each just those
people how too little state good very make world still own see men work long get here between
both life being under never day same another know while last might us great old year come since
against go came right used take three request response summary line answer word words number
value result function class import print self none true false def_ int str list dict""".split()


SPACE = "\u2581"  # SentencePiece's word boundary

# Pieces of code that real tokenizers keep whole, so strobe's code-like prompts land near the
# characters per token of real models (about 3 to 4).
CODE_PIECES = ["():", "()", SPACE * 4, SPACE * 2 + "#", SPACE + "compute(", "helper_", ")" + SPACE]


def vocabulary():
    """(pieces, scores, types) of the tokenizer, control tokens first."""
    pieces, scores, types = [], [], []

    def add(piece, score, kind):
        if piece not in seen:
            seen.add(piece)
            pieces.append(piece)
            scores.append(score)
            types.append(kind)

    def add_with_prefixes(piece):
        # llama.cpp's SentencePiece tokenizer builds a piece by merging neighbours whose join
        # is in the vocabulary, so every prefix of a piece must be one too; longer pieces
        # score higher, so whole words win over their letters.
        for end in range(1, len(piece) + 1):
            add(piece[:end], -20.0 + end, gguf.TokenType.NORMAL)

    seen = set()
    add("<unk>", 0.0, gguf.TokenType.UNKNOWN)
    add("<s>", 0.0, gguf.TokenType.CONTROL)
    add("</s>", 0.0, gguf.TokenType.CONTROL)
    for byte in range(256):
        add(f"<0x{byte:02X}>", 0.0, gguf.TokenType.BYTE)
    for char in string.ascii_letters + string.digits + string.punctuation + SPACE:
        add_with_prefixes(char)
        add_with_prefixes(SPACE + char)
    for word in WORDS:
        add_with_prefixes(SPACE + word)
        add_with_prefixes(word)
    for number in range(100):
        add_with_prefixes(str(number))
    for piece in CODE_PIECES:
        add_with_prefixes(piece)
    return pieces, scores, types


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--context", type=int, default=8192)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    pieces, scores, types = vocabulary()
    vocab = len(pieces)

    def weights(*shape, scale=0.02):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    writer = gguf.GGUFWriter(args.out, "llama")
    writer.add_name("strobe-tiny-random")
    writer.add_context_length(args.context)
    writer.add_embedding_length(EMBED)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(FFN)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(HEADS)
    writer.add_rope_dimension_count(EMBED // HEADS)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(pieces)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)
    writer.add_chat_template(CHAT_TEMPLATE)

    writer.add_tensor("token_embd.weight", weights(vocab, EMBED, scale=1.0))
    for layer in range(LAYERS):
        prefix = f"blk.{layer}"
        writer.add_tensor(f"{prefix}.attn_norm.weight", np.ones(EMBED, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(f"{prefix}.{name}.weight", weights(EMBED, EMBED))
        writer.add_tensor(f"{prefix}.ffn_norm.weight", np.ones(EMBED, dtype=np.float32))
        writer.add_tensor(f"{prefix}.ffn_gate.weight", weights(FFN, EMBED))
        writer.add_tensor(f"{prefix}.ffn_up.weight", weights(FFN, EMBED))
        writer.add_tensor(f"{prefix}.ffn_down.weight", weights(EMBED, FFN))
    writer.add_tensor("output_norm.weight", np.ones(EMBED, dtype=np.float32))
    output = weights(vocab, EMBED, scale=1.0)
    never = [i for i, kind in enumerate(types) if kind != gguf.TokenType.NORMAL]
    output[never, :] = 0.0
    writer.add_tensor("output.weight", output)

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    print(f"{args.out}: {vocab} tokens, seed {args.seed}, context {args.context}")


if __name__ == "__main__":
    main()
