"""What convgate's hf backend knows about a Hugging Face model folder's task: which task it is (the
OpenVINO verify-conversion gate's rule), how the backend runs it (greedy generation or one forward
pass), the ports it declares, and inputs that exercise it (ids inside the vocabulary, attention
masks of ones, token types of zeros, pixel values at the config's channels and image size, audio at
the length the model takes). Read by runtime/hf_runner.py; reads config.json and tokenizer files
only (no torch, no transformers), so `describe` and `inputs` start in a fraction of a second.
"""
import json
import os

# The gate's PIPELINE_TAG_MAP (docs/openvino.md; src/graph/hf_task.cc holds the same rule for the
# export): a pipeline tag -> optimum's task.
PIPELINE_TAG_MAP = {
    "text-generation": "text-generation-with-past",
    "text2text-generation": "text2text-generation-with-past",
    "text-classification": "text-classification",
    "token-classification": "token-classification",
    "question-answering": "question-answering",
    "feature-extraction": "feature-extraction",
    "fill-mask": "fill-mask",
    "image-classification": "image-classification",
    "automatic-speech-recognition": "automatic-speech-recognition",
    "audio-classification": "audio-classification",
}
SEQ2SEQ_TYPES = ("t5", "mt5", "bart", "mbart")

# Model types whose tokenizers return token_type_ids (and whose exports take them).
TOKEN_TYPE_MODELS = {"bert", "albert", "electra", "mobilebert", "convbert", "deberta",
                     "deberta-v2", "ernie", "funnel", "layoutlm", "squeezebert", "xlnet",
                     "megatron-bert", "nezha", "roc_bert"}

# The default texts: the document's LM prompt, and a sentence for encoders.
DEFAULT_LM_PROMPT = "Hello"
DEFAULT_TEXT = "hello world, this is a test of the converted model"
CAPTIONS = ["a photo of a cat", "a photo of a dog"]
AUDIO_SAMPLES = 16000  # one second at 16 kHz
UNTOKENIZED_LENGTH = 8  # prompt ids drawn for a folder without a tokenizer


class TaskError(Exception):
    """The folder's task is one the backend does not run: exit 3 with the message."""


# The wav2vec2 family: its ...ForSequenceClassification classifies audio (src/graph/hf_task.cc
# keeps the same list).
SPEECH_ENCODERS = ("Wav2Vec2", "Hubert", "Data2VecAudio", "WavLM", "UniSpeech", "SEW")


def task_of_architecture(arch):
    ends = arch.endswith
    if ends("ForSequenceClassification") and arch.startswith(SPEECH_ENCODERS):
        return "audio-classification"
    if ends("ForCausalLM") or ends("LMHeadModel"):
        return "text-generation-with-past"
    if ends("ForSpeechSeq2Seq") or ends("ForCTC") or arch == "WhisperForConditionalGeneration":
        return "automatic-speech-recognition"
    if ends("ForConditionalGeneration"):
        return "text2text-generation-with-past"
    for suffix, task in (("ForMaskedLM", "fill-mask"),
                         ("ForSequenceClassification", "text-classification"),
                         ("ForTokenClassification", "token-classification"),
                         ("ForQuestionAnswering", "question-answering"),
                         ("ForImageClassification", "image-classification"),
                         ("ForAudioClassification", "audio-classification")):
        if ends(suffix):
            return task
    if arch == "CLIPModel":
        return "zero-shot-image-classification"
    if ends("Model"):
        return "feature-extraction"
    return ""


def resolve_task(config):
    """(task, why): pipeline_tag first, then encoder-decoder types, then the architecture."""
    tag = config.get("pipeline_tag")
    if isinstance(tag, str) and tag:
        return PIPELINE_TAG_MAP.get(tag, tag), "config.json: pipeline_tag " + tag
    model_type = config.get("model_type", "")
    if model_type in SEQ2SEQ_TYPES:
        return "text2text-generation-with-past", "config.json: model_type " + model_type
    for arch in config.get("architectures") or []:
        task = task_of_architecture(arch) if isinstance(arch, str) else ""
        if task:
            return task, "config.json: architecture " + arch
    return "text-generation-with-past", "config.json: no pipeline_tag or known architecture"


def base_task(task):
    return task[:-len("-with-past")] if task.endswith("-with-past") else task


def is_seq2seq_speech(config):
    return bool(config.get("is_encoder_decoder")) and bool(config.get("num_mel_bins"))


def mode_of(task, config):
    """'generate' (greedy tokens) or 'forward' (one pass, the task's main outputs)."""
    task = base_task(task)
    if task in ("text-generation", "text2text-generation"):
        return "generate"
    if task == "automatic-speech-recognition":
        return "generate" if is_seq2seq_speech(config) else "forward"
    if task in FORWARD_OUTPUTS:
        return "forward"
    raise TaskError("task %s: the hf backend runs text-generation, text2text-generation, "
                    "speech recognition and the forward tasks %s"
                    % (task, ", ".join(sorted(FORWARD_OUTPUTS))))


# The outputs a forward task is compared on (what optimum's export validation compares).
FORWARD_OUTPUTS = {
    "fill-mask": ["logits"],
    "text-classification": ["logits"],
    "token-classification": ["logits"],
    "question-answering": ["start_logits", "end_logits"],
    "feature-extraction": ["last_hidden_state"],
    "image-classification": ["logits"],
    "audio-classification": ["logits"],
    "automatic-speech-recognition": ["logits"],  # CTC
    "zero-shot-image-classification": ["logits_per_image"],
}


def port(name, dtype, shape):
    return {"name": name, "type": dtype, "shape": shape}


def num_labels(config):
    labels = config.get("id2label")
    return len(labels) if isinstance(labels, dict) and labels else 2


def positive(config, key, folder):
    value = config.get(key)
    if not isinstance(value, int) or value <= 0:
        raise TaskError("%s/config.json: no positive %s" % (folder, key))
    return value


def vision_of(config):
    return config.get("vision_config") or config


def image_shape(config):
    vision = vision_of(config)
    size = vision.get("image_size", 224)
    return [1, vision.get("num_channels", 3), size, size]


def speech_feature_shape(config):
    return [1, config.get("num_mel_bins", 80), 2 * config.get("max_source_positions", 1500)]


def uses_token_types(folder, config):
    path = os.path.join(folder, "tokenizer_config.json")
    try:
        with open(path, encoding="utf-8") as f:
            names = json.load(f).get("model_input_names")
        if isinstance(names, list):
            return "token_type_ids" in names
    except (OSError, ValueError, AttributeError):
        pass
    return config.get("model_type", "") in TOKEN_TYPE_MODELS


def text_inputs(folder, config, sequence="sequence", rows=1):
    names = ["input_ids", "attention_mask"]
    if uses_token_types(folder, config):
        names.append("token_type_ids")
    return [port(n, "int64", [rows, sequence]) for n in names]


def ports(task, config, folder):
    """(inputs, outputs) the backend declares for the task."""
    task = base_task(task)
    mode = mode_of(task, config)
    if mode == "generate":
        vocab = positive(config, "vocab_size", folder)
        outputs = [port("token_ids", "int64", [1, "tokens"]),
                   port("first_step_logits", "float32", [1, vocab])]
        if has_tokenizer(folder):  # the decoded generation, for the LM check
            outputs.append(port("text", "string", [1]))
        if task == "automatic-speech-recognition":
            return [port("input_features", "float32", speech_feature_shape(config))], outputs
        return [port("input_ids", "int64", [1, "sequence"])], outputs
    if task in ("image-classification",):
        return ([port("pixel_values", "float32", image_shape(config))],
                [port("logits", "float32", [1, num_labels(config)])])
    if task == "zero-shot-image-classification":
        inputs = text_inputs(folder, config.get("text_config", {}), "text_sequence", "captions")
        return (inputs[:2] + [port("pixel_values", "float32", image_shape(config))],
                [port("logits_per_image", "float32", [1, "captions"])])
    if task in ("audio-classification", "automatic-speech-recognition"):
        inputs = [port("input_values", "float32", [1, "samples"])]
        if task == "audio-classification":
            return inputs, [port("logits", "float32", [1, num_labels(config)])]
        return inputs, [port("logits", "float32",
                             [1, "frames", positive(config, "vocab_size", folder)])]
    inputs = text_inputs(folder, config)
    hidden = config.get("hidden_size") or config.get("d_model") or "hidden"
    outputs = {
        "fill-mask": [port("logits", "float32", [1, "sequence",
                                                 positive(config, "vocab_size", folder)])],
        "text-classification": [port("logits", "float32", [1, num_labels(config)])],
        "token-classification": [port("logits", "float32", [1, "sequence", num_labels(config)])],
        "question-answering": [port("start_logits", "float32", [1, "sequence"]),
                               port("end_logits", "float32", [1, "sequence"])],
        "feature-extraction": [port("last_hidden_state", "float32", [1, "sequence", hidden])],
    }[task]
    return inputs, outputs


# ---------------------------------------------------------------------------------------------
# Inputs that exercise the model.

def has_tokenizer(folder):
    return os.path.isfile(os.path.join(folder, "tokenizer.json"))


def tokenizer_of(folder):
    """The folder's fast tokenizer (tokenizer.json, read by the tokenizers package), or None."""
    path = os.path.join(folder, "tokenizer.json")
    if not os.path.isfile(path):
        return None
    import tokenizers
    return tokenizers.Tokenizer.from_file(path)


def tokenize(folder, text, vocab):
    tok = tokenizer_of(folder)
    if tok is None:
        raise TaskError("%s has no tokenizer.json to tokenize the prompt %r: give the prompt's "
                        "ids with --load-inputs, or generated ids with --val-range "
                        "input_ids:[0,%d]" % (folder, text, vocab - 1))
    ids = tok.encode(text).ids
    if not ids:
        raise TaskError("%s/tokenizer.json makes no tokens of the prompt %r" % (folder, text))
    if vocab and max(ids) >= vocab:
        raise TaskError("%s/tokenizer.json gives id %d for the prompt %r, outside the model's "
                        "vocabulary of %d" % (folder, max(ids), text, vocab))
    return ids


def make_inputs(folder, config, task, prompt, seed, samples):
    """([sample {name: array}], description): sample 0 holds the tokenized prompt (or seeded
    normal pixels / audio); later samples vary the random parts by seed + index and, for text,
    draw ids uniformly inside the vocabulary at the prompt's length (no special ids)."""
    import numpy as np
    task = base_task(task)
    inputs, _ = ports(task, config, folder)
    names = [p["name"] for p in inputs]
    text_config = config.get("text_config", config)
    vocab = text_config.get("vocab_size") or config.get("vocab_size") or 0
    generative = mode_of(task, config) == "generate"
    described = []
    result = []
    for index in range(samples):
        rng = np.random.default_rng(seed + index)
        sample = {}
        if "input_ids" in names:
            if task == "zero-shot-image-classification":
                ids = [tokenize(folder, c, vocab) for c in CAPTIONS]
                width = max(len(i) for i in ids)
                pad = text_config.get("pad_token_id") or 0
                sample["input_ids"] = np.array([i + [pad] * (width - len(i)) for i in ids],
                                               dtype=np.int64)
                sample["attention_mask"] = np.array(
                    [[1] * len(i) + [0] * (width - len(i)) for i in ids], dtype=np.int64)
                if index == 0:
                    described.append("captions %s tokenized by tokenizer.json" % CAPTIONS)
            elif prompt is None and not has_tokenizer(folder):
                # Nothing to tokenize with: ids inside the vocabulary, past the special ones.
                ids = rng.integers(low_id(config), vocab, size=UNTOKENIZED_LENGTH).tolist()
                sample["input_ids"] = np.array([ids], dtype=np.int64)
                if index == 0:
                    described.append("no tokenizer.json: ids uniform in [%d, %d), %d tokens, "
                                     "seed %d+i" % (low_id(config), vocab, len(ids), seed))
            else:
                text = prompt if prompt is not None else (
                    DEFAULT_LM_PROMPT if generative else DEFAULT_TEXT)
                ids = tokenize(folder, text, vocab)
                if index > 0:
                    ids = rng.integers(low_id(config), vocab, size=len(ids)).tolist()
                sample["input_ids"] = np.array([ids], dtype=np.int64)
                if index == 0:
                    described.append("prompt %r tokenized by tokenizer.json (%d tokens)"
                                     % (text, len(ids)))
                if samples > 1 and index == 1:
                    later = "sample 1" if samples == 2 else "samples 1-%d" % (samples - 1)
                    described.append("%s: ids uniform in [%d, %d) at that length, seed %d+i"
                                     % (later, low_id(config), vocab, seed))
            if "attention_mask" in names and "attention_mask" not in sample:
                sample["attention_mask"] = np.ones_like(sample["input_ids"])
            if "token_type_ids" in names:
                sample["token_type_ids"] = np.zeros_like(sample["input_ids"])
        for p in inputs:
            if p["name"] in sample:
                continue
            shape = list(p["shape"])
            if p["name"] == "input_values":
                shape = [1, AUDIO_SAMPLES]
            sample[p["name"]] = rng.standard_normal(shape).astype(np.float32)
            if index == 0:
                described.append("%s ~ N(0,1) %s, seed %d+i" % (p["name"], shape, seed))
        result.append(sample)
    for name in ("attention_mask", "token_type_ids"):
        if name in names and task != "zero-shot-image-classification":
            described.append(name + (" ones" if name == "attention_mask" else " zeros"))
    return result, "; ".join(described)


def low_id(config):
    """The first id past the special tokens most tokenizers put first (pad, unk, bos, eos...)."""
    specials = [config.get(k) for k in ("pad_token_id", "bos_token_id", "eos_token_id",
                                        "unk_token_id", "decoder_start_token_id")]
    specials = [s for s in specials if isinstance(s, int) and s < 16]
    return max(specials) + 1 if specials else 0
