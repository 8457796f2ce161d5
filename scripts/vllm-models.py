"""Writes the model folders that scripts/vllm.sh serves with vLLM, from the SmolLM2-135M-Instruct GGUF.

Run inside the vLLM virtual environment (it needs torch, transformers, gguf and safetensors), offline:

    python scripts/vllm-models.py --gguf SmolLM2.gguf [--tiny DIR] [--smollm2 DIR]

--tiny DIR: a tiny Llama-architecture folder with no weights (hidden size 256, 4 layers, 4 heads,
2 KV heads, the SmolLM2 tokenizer and chat template), to serve with `--load-format dummy`.

--smollm2 DIR: the real SmolLM2-135M-Instruct, dequantised from the GGUF by transformers' GGUF
loader (which also undoes the GGUF's permutation of the q/k projections) and written as float32
safetensors (about 540 MB; vLLM 0.32.0's CPU build answers nonsense with these weights in bf16 on
this machine, though transformers in bf16 answers well) with its config, generation config and tokenizer. `save_pretrained` refuses a model
loaded from a GGUF, so the tensors are written with safetensors directly. Tied embeddings are
written once (`lm_head.weight` is left out when `tie_word_embeddings` is set).
"""

import argparse
import json
import pathlib
import sys

import torch
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig

# SmolLM2's own template (ChatML with a default system prompt), used only when the GGUF has none.
CHATML = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}"
    "{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

QUESTION = "What is the capital of France?"


def log(*parts):
    print("vllm-models.py:", *parts, file=sys.stderr, flush=True)


def load_tokenizer(gguf):
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    if not tokenizer.chat_template:
        log("the GGUF has no chat template: using ChatML")
        tokenizer.chat_template = CHATML
    return tokenizer


def write_tokenizer(tokenizer, target):
    tokenizer.save_pretrained(target)
    # The chat template must be where vLLM looks: tokenizer_config.json (older transformers) or
    # chat_template.jinja (newer); make sure tokenizer_config.json carries it either way.
    config_path = target / "tokenizer_config.json"
    config = json.loads(config_path.read_text())
    if "chat_template" not in config:
        config["chat_template"] = tokenizer.chat_template
        config_path.write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n")


def write_tiny(gguf, target):
    tokenizer = load_tokenizer(gguf)
    target.mkdir(parents=True, exist_ok=True)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=256,
        intermediate_size=768,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=64,
        max_position_embeddings=8192,
        rope_theta=100000.0,
        rms_norm_eps=1e-5,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    config.architectures = ["LlamaForCausalLM"]
    config.dtype = torch.bfloat16
    config.save_pretrained(target)
    write_tokenizer(tokenizer, target)
    log(f"wrote {target} (vocabulary {len(tokenizer)}, no weights: serve with --load-format dummy)")


def write_smollm2(gguf, target):
    tokenizer = load_tokenizer(gguf)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    model.eval()
    # A sanity check before writing: greedy answer to a question with a known answer.
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": QUESTION}], add_generation_prompt=True, return_tensors="pt", return_dict=True
    )
    with torch.no_grad():
        output = model.generate(**prompt, max_new_tokens=20, do_sample=False)
    answer = tokenizer.decode(output[0, prompt["input_ids"].shape[1]:], skip_special_tokens=True)
    log(f"{QUESTION!r} -> {answer!r}")
    if "paris" not in answer.lower():
        sys.exit("the dequantised model does not answer sensibly; not writing it")

    target.mkdir(parents=True, exist_ok=True)
    state = {name: tensor.detach().to(torch.float32).contiguous() for name, tensor in model.state_dict().items()}
    if model.config.tie_word_embeddings:
        state.pop("lm_head.weight", None)
    save_file(state, str(target / "model.safetensors"), metadata={"format": "pt"})
    (target / "model.safetensors").chmod(0o644)
    model.config.architectures = ["LlamaForCausalLM"]
    model.config.dtype = torch.float32
    model.config.save_pretrained(target)
    # Written as a plain checkpoint: drop what says "GGUF" (vLLM would load it as GGUF-quantised).
    config_path = target / "config.json"
    config = json.loads(config_path.read_text())
    for key in ("quantization_config", "_model_name_or_path", "_name_or_path"):
        config.pop(key, None)
    config_path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    model.generation_config.save_pretrained(target)
    write_tokenizer(tokenizer, target)
    size = sum(t.numel() * t.element_size() for t in state.values())
    log(f"wrote {target} ({len(state)} tensors, {size / 1e6:.0f} MB)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", required=True, type=pathlib.Path)
    parser.add_argument("--tiny", type=pathlib.Path)
    parser.add_argument("--smollm2", type=pathlib.Path)
    args = parser.parse_args()
    gguf = args.gguf.resolve()
    if args.tiny:
        write_tiny(gguf, args.tiny)
    if args.smollm2:
        write_smollm2(gguf, args.smollm2)


if __name__ == "__main__":
    main()
