#!/usr/bin/env python3
"""Writes a synthetic multimodal projector for llama.cpp's llama-server.

A LLaVA-style `mlp` projector (`clip.projector_type = mlp`) with a one-block vision tower,
64x64 images in 16x16 patches (16 image tokens each) and seeded random weights, whose output
width matches a text model's embeddings (576 for SmolLM2-135M). Started with `--mmproj FILE`,
llama-server then accepts, encodes and counts images and video frames; what the model says
about them is nonsense, but the request parsing, the token accounting and the outcome classes
are the server's own.

    python3 scripts/mmproj.py OUT.gguf [--n-embd 576]

Needs the `gguf` package (llama.cpp's own GGUF writer) and numpy.
"""

import argparse

import numpy as np
import gguf

IMAGE_SIZE = 64
PATCH_SIZE = 16
VISION_WIDTH = 64
VISION_FF = 128
VISION_HEADS = 2
PROJECTOR_HIDDEN = 128


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the GGUF file to write")
    parser.add_argument(
        "--n-embd", type=int, default=576, help="the text model's embedding width"
    )
    args = parser.parse_args()
    rng = np.random.default_rng(7)

    def weights(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    def ones(n: int) -> np.ndarray:
        return np.ones(n, dtype=np.float32)

    def zeros(n: int) -> np.ndarray:
        return np.zeros(n, dtype=np.float32)

    writer = gguf.GGUFWriter(args.out, "clip")
    writer.add_name("synthetic LLaVA-style projector (random weights)")
    writer.add_bool("clip.has_vision_encoder", True)
    writer.add_bool("clip.has_audio_encoder", False)
    writer.add_string("clip.projector_type", "mlp")
    writer.add_bool("clip.use_gelu", True)
    writer.add_uint32("clip.vision.image_size", IMAGE_SIZE)
    writer.add_uint32("clip.vision.patch_size", PATCH_SIZE)
    writer.add_uint32("clip.vision.embedding_length", VISION_WIDTH)
    writer.add_uint32("clip.vision.feed_forward_length", VISION_FF)
    writer.add_uint32("clip.vision.block_count", 1)
    writer.add_uint32("clip.vision.projection_dim", args.n_embd)
    writer.add_uint32("clip.vision.attention.head_count", VISION_HEADS)
    writer.add_float32("clip.vision.attention.layer_norm_epsilon", 1e-5)
    writer.add_array("clip.vision.image_mean", [0.5, 0.5, 0.5])
    writer.add_array("clip.vision.image_std", [0.5, 0.5, 0.5])

    # numpy shapes are ggml's dimensions reversed.
    n_patches = (IMAGE_SIZE // PATCH_SIZE) ** 2
    writer.add_tensor("v.patch_embd.weight", weights(VISION_WIDTH, 3, PATCH_SIZE, PATCH_SIZE))
    writer.add_tensor("v.position_embd.weight", weights(n_patches, VISION_WIDTH))
    writer.add_tensor("v.pre_ln.weight", ones(VISION_WIDTH))
    writer.add_tensor("v.pre_ln.bias", zeros(VISION_WIDTH))
    for name in ("attn_q", "attn_k", "attn_v", "attn_out"):
        writer.add_tensor(f"v.blk.0.{name}.weight", weights(VISION_WIDTH, VISION_WIDTH))
        writer.add_tensor(f"v.blk.0.{name}.bias", zeros(VISION_WIDTH))
    for name in ("ln1", "ln2"):
        writer.add_tensor(f"v.blk.0.{name}.weight", ones(VISION_WIDTH))
        writer.add_tensor(f"v.blk.0.{name}.bias", zeros(VISION_WIDTH))
    writer.add_tensor("v.blk.0.ffn_up.weight", weights(VISION_FF, VISION_WIDTH))
    writer.add_tensor("v.blk.0.ffn_up.bias", zeros(VISION_FF))
    writer.add_tensor("v.blk.0.ffn_down.weight", weights(VISION_WIDTH, VISION_FF))
    writer.add_tensor("v.blk.0.ffn_down.bias", zeros(VISION_WIDTH))
    # The projector: vision width -> hidden -> the text model's width.
    writer.add_tensor("mm.0.weight", weights(PROJECTOR_HIDDEN, VISION_WIDTH))
    writer.add_tensor("mm.0.bias", zeros(PROJECTOR_HIDDEN))
    writer.add_tensor("mm.2.weight", weights(args.n_embd, PROJECTOR_HIDDEN))
    writer.add_tensor("mm.2.bias", zeros(args.n_embd))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    main()
