"""What OpenVINO's verify-conversion document does after `optimum-cli export openvino`, in one
Python process: load the exported IR with optimum-intel, tokenize the prompt, generate greedily,
decode and fail on a blank text, then generate with the PyTorch original and compare the token ids.
The baseline of bench/hf_verify.sh (the export is timed apart, as convgate's verify includes it).

Usage: hf_verify.py SOURCE_FOLDER EXPORT_FOLDER [NEW_TOKENS]
Exit 0 when the decode is non-blank and the token ids match, 1 otherwise.
"""
import os
import sys

os.environ.setdefault("USE_TF", "0")  # as convgate's runner: transformers would import TensorFlow


def main(source, export, new_tokens):
    import torch
    import transformers
    from optimum.intel import OVModelForCausalLM
    tokenizer = transformers.AutoTokenizer.from_pretrained(export)
    prompt = tokenizer("Hello", return_tensors="pt")
    generate = dict(max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False)
    ov_model = OVModelForCausalLM.from_pretrained(export, device="CPU",
                                                  ov_config={"INFERENCE_PRECISION_HINT": "f32"})
    ov_ids = ov_model.generate(**prompt, **generate)
    text = tokenizer.decode(ov_ids[0, prompt["input_ids"].shape[1]:], skip_special_tokens=True)
    pt_model = transformers.AutoModelForCausalLM.from_pretrained(source).eval()
    with torch.no_grad():
        pt_ids = pt_model.generate(**prompt, **generate)
    ok = bool(text.strip()) and torch.equal(ov_ids, pt_ids)
    print(f"text {text!r}, token ids {'match' if torch.equal(ov_ids, pt_ids) else 'differ'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 8))
