#!/usr/bin/env python3
"""Builds a tiny offline Hugging Face model zoo: random-weight models made from configs.

Run with the project's venv (~/.cache/convgate-deps/venv: transformers, tokenizers, torch); the
Hugging Face Hub is never contacted (HF_HUB_OFFLINE=1 is set before transformers is imported).

  make_hf_zoo.py --out DIR [--seed 0] [--only gpt2,t5]

Writes one folder per model type into DIR, each laid out as a hub folder is, with what optimum's
exporters and transformers' Auto classes need:
  config.json (with `architectures`), model.safetensors (seeded random weights),
  a tokenizer made here on a fixed corpus, as a `tokenizers` model wrapped in the model type's
  fast tokenizer class (text models; wav2vec2's CTC tokenizer is a vocab.json),
  preprocessor_config.json (vit, clip, whisper, wav2vec2),
  generation_config.json (gpt2, llama, t5, whisper),
and DIR/manifest.json listing each model: folder, model_type, architectures, model_class, the
optimum task it exports as, and the deterministic input hf_generate.py feeds it.

Every model is tiny (2 layers, hidden size 32) so an export takes seconds. Weights come from
torch.manual_seed(seed + index), and the vocabularies are learnt here with fixed tie-breaking
(WordPiece and Unigram from word counts, BPE merges most frequent first, then by spelling):
tokenizers' own trainers break ties in hash order, which changes from run to run. So the folder's
bytes depend only on this script, the seed and the package versions (make_hf_zoo.sh's cache key).

preprocessor_config.json is written as JSON (the dictionary the processor classes save): the
image processors need Pillow to be instantiated, and the venv does not have it.

Prints one JSON line on stdout (the manifest's path and the models). Exit codes: 0 built,
2 usage, 3 a model failed to build (message on stderr naming it).
"""

import argparse
import json
import os
import sys
import time

# transformers imports TensorFlow whenever it is installed (the venv has tensorflow-cpu for ovc's
# SavedModel path), and TensorFlow brings h5py, whose at-fork handler deadlocks against Python's
# import lock when a thread forks while another imports: an optimum-cli export of gpt2 hung so,
# idle until the conversion timeout, in two full test runs. Every model these tools load is
# PyTorch, so transformers is told not to look for TensorFlow (children inherit it).
os.environ.setdefault("USE_TF", "0")

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

EXIT_OK, EXIT_USAGE, EXIT_FAILED = 0, 2, 3

# New models go at the end: each model's weights are seeded by its index.
MODELS = ["bert", "t5", "gpt2", "vit", "clip", "whisper", "wav2vec2", "llama", "bert-cls",
          "bert-ner"]

# The corpus the tokenizers are trained on: fixed, so the vocabularies are too.
CORPUS = [
    "the quick brown fox jumps over the lazy dog",
    "a model converted from one format to another must give the same outputs",
    "convgate runs the source and the target on the same inputs and compares them",
    "hello world, this is a tiny model with random weights",
    "open vino and onnx runtime run the converted models on the cpu",
    "translate english to german: the house is wonderful",
    "summarize: the tiny zoo is built offline from configs and seeds",
    "numbers 0 1 2 3 4 5 6 7 8 9 and punctuation . , ; : ! ? ' \" ( ) [ ] - _ / @ #",
    "a photo of a cat", "a photo of a dog", "a photo of a fox",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefghijklmnopqrstuvwxyz",
] * 4

TINY = dict(hidden=32, layers=2, heads=2, intermediate=64, positions=128)
IMAGE_SIZE, PATCH_SIZE = 32, 8


class BuildError(Exception):
    pass


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="make_hf_zoo.py",
        description="Build tiny random-weight Hugging Face models from configs, offline.")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="folder to write the zoo into (created; must be empty if it exists)")
    parser.add_argument("--seed", type=int, default=0, help="weights seed (default 0)")
    parser.add_argument("--only", metavar="TYPE,...",
                        help="comma-separated subset of: " + ", ".join(MODELS))
    args = parser.parse_args(argv)
    args.models = MODELS
    if args.only:
        args.models = [m.strip() for m in args.only.split(",") if m.strip()]
        unknown = [m for m in args.models if m not in MODELS]
        if unknown:
            parser.error("--only: unknown model type(s) %s; known: %s"
                         % (", ".join(unknown), ", ".join(MODELS)))
    if os.path.exists(args.out) and (not os.path.isdir(args.out) or os.listdir(args.out)):
        parser.error("--out %s: exists and is not an empty folder" % args.out)
    return args


# ---------------------------------------------------------------------------------------------
# Tokenizers, trained here on CORPUS.

def _bpe_merges(words, alphabet, vocab_size, suffix=""):
    """Learns BPE merges from (word, count) pairs, the most frequent pair first and ties broken by
    spelling, so the result is the same on every run (tokenizers' BpeTrainer breaks ties by hash
    order, which changes from run to run). Returns (vocab list, merges list)."""
    corpus = {}
    for word, count in words:
        symbols = list(word)
        symbols[-1] += suffix
        corpus[tuple(symbols)] = corpus.get(tuple(symbols), 0) + count
    vocab, merges = list(alphabet), []
    known = set(vocab)
    while len(vocab) < vocab_size:
        pairs = {}
        for symbols, count in corpus.items():
            for pair in zip(symbols, symbols[1:]):
                pairs[pair] = pairs.get(pair, 0) + count
        if not pairs:
            break
        best = min(pairs.items(), key=lambda item: (-item[1], item[0]))[0]
        merged = best[0] + best[1]
        merges.append(best)
        if merged not in known:
            vocab.append(merged)
            known.add(merged)
        rewritten = {}
        for symbols, count in corpus.items():
            out, i = [], 0
            while i < len(symbols):
                if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == best:
                    out.append(merged)
                    i += 2
                else:
                    out.append(symbols[i])
                    i += 1
            rewritten[tuple(out)] = rewritten.get(tuple(out), 0) + count
        corpus = rewritten
    return vocab, merges


def _byte_level_bpe(vocab_size, specials):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    pre = pre_tokenizers.ByteLevel(add_prefix_space=False)
    pieces, merges = _bpe_merges(_word_counts(pre), sorted(pre_tokenizers.ByteLevel.alphabet()),
                                 vocab_size - len(specials))
    vocab = {t: i for i, t in enumerate(specials + pieces)}
    tok = Tokenizer(models.BPE(vocab, merges))
    tok.pre_tokenizer = pre
    tok.decoder = decoders.ByteLevel()
    return tok


def gpt2_tokenizer():
    from transformers import GPT2TokenizerFast
    tok = _byte_level_bpe(400, ["<|endoftext|>"])
    return GPT2TokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>",
                             eos_token="<|endoftext|>", unk_token="<|endoftext|>",
                             model_max_length=TINY["positions"])


def llama_tokenizer():
    from tokenizers import processors
    from transformers import PreTrainedTokenizerFast
    tok = _byte_level_bpe(400, ["<unk>", "<s>", "</s>"])
    bos = tok.token_to_id("<s>")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", bos)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                   unk_token="<unk>", pad_token="</s>",
                                   model_input_names=["input_ids", "attention_mask"],
                                   model_max_length=TINY["positions"])


def _word_counts(pre_tokenizer, normalize=str):
    """Counts the corpus' words as split by pre_tokenizer, most frequent first, then by spelling."""
    counts = {}
    for line in CORPUS:
        for word, _ in pre_tokenizer.pre_tokenize_str(normalize(line)):
            counts[word] = counts.get(word, 0) + 1
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def bert_tokenizer():
    # The vocabulary is made here rather than by tokenizers' WordPieceTrainer, whose choice among
    # equally frequent pieces changes from run to run (hash ordering): the cache key promises the
    # same bytes for the same script and versions.
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import BertTokenizerFast
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    pre = pre_tokenizers.BertPreTokenizer()
    words = _word_counts(pre, str.lower)
    chars = sorted({c for word, _ in words for c in word})
    vocab = specials + chars + ["##" + c for c in chars]
    vocab += [word for word, _ in words if len(word) > 1]
    tok = Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre
    tok.decoder = decoders.WordPiece()
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    return BertTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", sep_token="[SEP]",
                             pad_token="[PAD]", cls_token="[CLS]", mask_token="[MASK]",
                             model_max_length=TINY["positions"])


def t5_tokenizer():
    # A Unigram model made here from the corpus' word frequencies (tokenizers' UnigramTrainer is
    # not reproducible from run to run): whole words, then single characters as the fallback.
    import math
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import T5TokenizerFast
    specials = ["<pad>", "</s>", "<unk>"]
    pre = pre_tokenizers.Metaspace()
    words = _word_counts(pre)
    total = sum(n for _, n in words)
    chars = sorted({c for word, _ in words for c in word})
    vocab = [(t, 0.0) for t in specials]
    vocab += [(word, math.log(n / total)) for word, n in words if len(word) > 1]
    vocab += [(c, math.log(0.1 / total)) for c in chars]
    tok = Tokenizer(models.Unigram(vocab, unk_id=2, byte_fallback=False))
    tok.pre_tokenizer = pre
    tok.decoder = decoders.Metaspace()
    eos = tok.token_to_id("</s>")
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", eos)])
    return T5TokenizerFast(tokenizer_object=tok, eos_token="</s>", unk_token="<unk>",
                           pad_token="<pad>", extra_ids=0, model_max_length=TINY["positions"])


def clip_tokenizer():
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers
    from tokenizers import processors
    from transformers import CLIPTokenizerFast
    # CLIPTokenizerFast insists on CLIP's own layout: a Split + ByteLevel pre-tokenizer sequence,
    # '</w>' word ends, start/end-of-text tokens.
    specials = ["<|startoftext|>", "<|endoftext|>"]
    normalizer = normalizers.Sequence([normalizers.NFC(), normalizers.Lowercase()])
    split = r"""'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""
    pre = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(split), behavior="removed", invert=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False)])
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    pieces, merges = _bpe_merges(_word_counts(pre, normalizer.normalize_str),
                                 alphabet + [c + "</w>" for c in alphabet], 400 + len(alphabet),
                                 suffix="</w>")
    vocab = {t: i for i, t in enumerate(specials + pieces)}
    tok = Tokenizer(models.BPE(vocab, merges, unk_token="<|endoftext|>", end_of_word_suffix="</w>"))
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre
    tok.decoder = decoders.ByteLevel()
    bos, eos = tok.token_to_id("<|startoftext|>"), tok.token_to_id("<|endoftext|>")
    tok.post_processor = processors.RobertaProcessing(
        sep=("<|endoftext|>", eos), cls=("<|startoftext|>", bos),
        add_prefix_space=False, trim_offsets=False)
    return CLIPTokenizerFast(tokenizer_object=tok, bos_token="<|startoftext|>",
                             eos_token="<|endoftext|>", unk_token="<|endoftext|>",
                             pad_token="<|endoftext|>", model_max_length=16)


WHISPER_SPECIALS = ["<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|translate|>",
                    "<|transcribe|>", "<|startoflm|>", "<|startofprev|>", "<|nospeech|>",
                    "<|notimestamps|>"]


def whisper_tokenizer():
    from transformers import WhisperTokenizerFast
    tok = _byte_level_bpe(400, WHISPER_SPECIALS)
    return WhisperTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>",
                                eos_token="<|endoftext|>", unk_token="<|endoftext|>",
                                pad_token="<|endoftext|>", model_max_length=64)


def wav2vec2_tokenizer(folder):
    from transformers import Wav2Vec2CTCTokenizer
    letters = list("abcdefghijklmnopqrstuvwxyz'")
    vocab = {"<pad>": 0, "<s>": 1, "</s>": 2, "<unk>": 3, "|": 4}
    for letter in letters:
        vocab[letter] = len(vocab)
    vocab_file = os.path.join(folder, "vocab.json")
    os.makedirs(folder, exist_ok=True)
    with open(vocab_file, "w") as f:
        json.dump(vocab, f)
    return Wav2Vec2CTCTokenizer(vocab_file, word_delimiter_token="|")


# ---------------------------------------------------------------------------------------------
# preprocessor_config.json, as the processor classes write it.

def vit_preprocessor():
    return {"image_processor_type": "ViTImageProcessor", "do_resize": True,
            "size": {"height": IMAGE_SIZE, "width": IMAGE_SIZE}, "resample": 2,
            "do_rescale": True, "rescale_factor": 1 / 255, "do_normalize": True,
            "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}


def clip_preprocessor():
    return {"image_processor_type": "CLIPImageProcessor", "processor_class": "CLIPProcessor",
            "do_resize": True, "size": {"shortest_edge": IMAGE_SIZE}, "resample": 3,
            "do_center_crop": True, "crop_size": {"height": IMAGE_SIZE, "width": IMAGE_SIZE},
            "do_rescale": True, "rescale_factor": 1 / 255, "do_normalize": True,
            "do_convert_rgb": True,
            "image_mean": [0.48145466, 0.4578275, 0.40821073],
            "image_std": [0.26862954, 0.26130258, 0.27577711]}


# ---------------------------------------------------------------------------------------------
# The models. Each builder returns (model, tokenizer or None, extra) where extra holds
# manifest fields and optional preprocessor / generation config.

def build_bert():
    from transformers import BertConfig, BertForMaskedLM
    tok = bert_tokenizer()
    config = BertConfig(vocab_size=len(tok), hidden_size=TINY["hidden"],
                        num_hidden_layers=TINY["layers"], num_attention_heads=TINY["heads"],
                        intermediate_size=TINY["intermediate"],
                        max_position_embeddings=TINY["positions"], pad_token_id=tok.pad_token_id)
    return BertForMaskedLM(config), tok, {
        "task": "fill-mask", "model_class": "AutoModelForMaskedLM",
        "input": {"text": "the quick brown [MASK] jumps over the lazy dog"}}


def _bert_config(tok, **extra):
    from transformers import BertConfig
    return BertConfig(vocab_size=len(tok), hidden_size=TINY["hidden"],
                      num_hidden_layers=TINY["layers"], num_attention_heads=TINY["heads"],
                      intermediate_size=TINY["intermediate"],
                      max_position_embeddings=TINY["positions"], pad_token_id=tok.pad_token_id,
                      **extra)


def build_bert_cls():
    # A text classifier whose config carries a pipeline_tag: the gate's task map reads it first.
    from transformers import BertForSequenceClassification
    tok = bert_tokenizer()
    labels = {0: "negative", 1: "neutral", 2: "positive"}
    config = _bert_config(tok, id2label=labels, label2id={v: k for k, v in labels.items()},
                          pipeline_tag="text-classification")
    return BertForSequenceClassification(config), tok, {
        "task": "text-classification", "model_class": "AutoModelForSequenceClassification",
        "input": {"text": "the quick brown fox jumps over the lazy dog"}}


def build_bert_ner():
    from transformers import BertForTokenClassification
    tok = bert_tokenizer()
    labels = {0: "O", 1: "B-PER", 2: "I-PER", 3: "B-LOC", 4: "I-LOC"}
    config = _bert_config(tok, id2label=labels, label2id={v: k for k, v in labels.items()})
    return BertForTokenClassification(config), tok, {
        "task": "token-classification", "model_class": "AutoModelForTokenClassification",
        "input": {"text": "the quick brown fox jumps over the lazy dog"}}


def build_gpt2():
    from transformers import GenerationConfig, GPT2Config, GPT2LMHeadModel
    tok = gpt2_tokenizer()
    config = GPT2Config(vocab_size=len(tok), n_positions=TINY["positions"], n_embd=TINY["hidden"],
                        n_layer=TINY["layers"], n_head=TINY["heads"], n_inner=TINY["intermediate"],
                        bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    gen = GenerationConfig(bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                           pad_token_id=tok.eos_token_id)
    return GPT2LMHeadModel(config), tok, {
        "task": "text-generation-with-past", "model_class": "AutoModelForCausalLM",
        "input": {"text": "hello world, this is"}, "generation_config": gen}


def build_llama():
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM
    tok = llama_tokenizer()
    config = LlamaConfig(vocab_size=len(tok), hidden_size=TINY["hidden"],
                         intermediate_size=TINY["intermediate"],
                         num_hidden_layers=TINY["layers"], num_attention_heads=TINY["heads"],
                         num_key_value_heads=1, max_position_embeddings=TINY["positions"],
                         bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                         pad_token_id=tok.pad_token_id, tie_word_embeddings=False)
    gen = GenerationConfig(bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                           pad_token_id=tok.pad_token_id)
    return LlamaForCausalLM(config), tok, {
        "task": "text-generation-with-past", "model_class": "AutoModelForCausalLM",
        "input": {"text": "hello world, this is"}, "generation_config": gen}


def build_t5():
    from transformers import GenerationConfig, T5Config, T5ForConditionalGeneration
    tok = t5_tokenizer()
    config = T5Config(vocab_size=len(tok), d_model=TINY["hidden"], d_kv=16,
                      d_ff=TINY["intermediate"], num_layers=TINY["layers"],
                      num_decoder_layers=TINY["layers"], num_heads=TINY["heads"],
                      relative_attention_num_buckets=8, relative_attention_max_distance=32,
                      pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
                      decoder_start_token_id=tok.pad_token_id)
    gen = GenerationConfig(decoder_start_token_id=tok.pad_token_id,
                           eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    model = T5ForConditionalGeneration(config)
    # Random weights make <pad> the greedy choice at every step, so the generation decodes to
    # nothing and the gate's LM check (a blank decode fails) would reject the source itself. A
    # zero embedding for <pad> (tied to the LM head: its logit becomes 0) lets real tokens win.
    import torch
    with torch.no_grad():
        model.shared.weight[tok.pad_token_id].zero_()
    return model, tok, {
        "task": "text2text-generation-with-past", "model_class": "AutoModelForSeq2SeqLM",
        "input": {"text": "translate english to german: the house is wonderful"},
        "generation_config": gen}


def build_vit():
    from transformers import ViTConfig, ViTForImageClassification
    config = ViTConfig(image_size=IMAGE_SIZE, patch_size=PATCH_SIZE, num_channels=3,
                       hidden_size=TINY["hidden"], num_hidden_layers=TINY["layers"],
                       num_attention_heads=TINY["heads"], intermediate_size=TINY["intermediate"],
                       num_labels=3, id2label={0: "cat", 1: "dog", 2: "fox"},
                       label2id={"cat": 0, "dog": 1, "fox": 2})
    return ViTForImageClassification(config), None, {
        "task": "image-classification", "model_class": "AutoModelForImageClassification",
        "input": {"pixel_values": [1, 3, IMAGE_SIZE, IMAGE_SIZE]},
        "preprocessor": vit_preprocessor()}


def build_clip():
    from transformers import CLIPConfig, CLIPModel
    tok = clip_tokenizer()
    text = dict(vocab_size=len(tok), hidden_size=TINY["hidden"],
                intermediate_size=TINY["intermediate"], num_hidden_layers=TINY["layers"],
                num_attention_heads=TINY["heads"], max_position_embeddings=16,
                bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                pad_token_id=tok.pad_token_id)
    vision = dict(hidden_size=TINY["hidden"], intermediate_size=TINY["intermediate"],
                  num_hidden_layers=TINY["layers"], num_attention_heads=TINY["heads"],
                  image_size=IMAGE_SIZE, patch_size=PATCH_SIZE)
    config = CLIPConfig(text_config=text, vision_config=vision, projection_dim=TINY["hidden"])
    return CLIPModel(config), tok, {
        "task": "zero-shot-image-classification", "model_class": "CLIPModel",
        "input": {"text": ["a photo of a cat", "a photo of a dog"],
                  "pixel_values": [1, 3, IMAGE_SIZE, IMAGE_SIZE]},
        "preprocessor": clip_preprocessor()}


def build_whisper():
    from transformers import GenerationConfig, WhisperConfig, WhisperFeatureExtractor
    from transformers import WhisperForConditionalGeneration
    tok = whisper_tokenizer()
    ids = {t: tok.convert_tokens_to_ids(t) for t in WHISPER_SPECIALS}
    # 30 s chunks (3000 mel frames, 1500 encoder positions) as every Whisper: the model checks
    # the input length against max_source_positions.
    fe = WhisperFeatureExtractor(feature_size=80)
    config = WhisperConfig(vocab_size=len(tok), num_mel_bins=80, d_model=TINY["hidden"],
                           encoder_layers=TINY["layers"], decoder_layers=TINY["layers"],
                           encoder_attention_heads=TINY["heads"],
                           decoder_attention_heads=TINY["heads"],
                           encoder_ffn_dim=TINY["intermediate"],
                           decoder_ffn_dim=TINY["intermediate"],
                           max_source_positions=1500, max_target_positions=64,
                           pad_token_id=ids["<|endoftext|>"], bos_token_id=ids["<|endoftext|>"],
                           eos_token_id=ids["<|endoftext|>"],
                           decoder_start_token_id=ids["<|startoftranscript|>"],
                           begin_suppress_tokens=None, suppress_tokens=None)
    gen = GenerationConfig(decoder_start_token_id=ids["<|startoftranscript|>"],
                           bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|endoftext|>"],
                           pad_token_id=ids["<|endoftext|>"],
                           no_timestamps_token_id=ids["<|notimestamps|>"],
                           is_multilingual=False, max_length=64)
    return WhisperForConditionalGeneration(config), tok, {
        "task": "automatic-speech-recognition-with-past",
        "model_class": "AutoModelForSpeechSeq2Seq",
        "input": {"input_features": [1, 80, 3000]},
        "preprocessor": fe.to_dict(), "generation_config": gen}


def build_wav2vec2(folder):
    from transformers import Wav2Vec2Config, Wav2Vec2FeatureExtractor, Wav2Vec2ForCTC
    tok = wav2vec2_tokenizer(folder)
    fe = Wav2Vec2FeatureExtractor(feature_size=1, sampling_rate=16000, padding_value=0.0,
                                  do_normalize=True, return_attention_mask=False)
    config = Wav2Vec2Config(vocab_size=len(tok), hidden_size=TINY["hidden"],
                            num_hidden_layers=TINY["layers"], num_attention_heads=TINY["heads"],
                            intermediate_size=TINY["intermediate"],
                            conv_dim=(32, 32, 32), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
                            num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2,
                            pad_token_id=tok.pad_token_id, ctc_loss_reduction="mean")
    preprocessor = fe.to_dict()
    preprocessor["processor_class"] = "Wav2Vec2Processor"
    return Wav2Vec2ForCTC(config), tok, {
        "task": "automatic-speech-recognition", "model_class": "AutoModelForCTC",
        "input": {"input_values": [1, 16000]}, "preprocessor": preprocessor}


BUILDERS = {"bert": build_bert, "t5": build_t5, "gpt2": build_gpt2, "vit": build_vit,
            "clip": build_clip, "whisper": build_whisper, "wav2vec2": build_wav2vec2,
            "llama": build_llama, "bert-cls": build_bert_cls, "bert-ner": build_bert_ner}


def build_one(name, index, seed, zoo):
    import torch
    folder = os.path.join(zoo, name)
    torch.manual_seed(seed + index)
    start = time.monotonic()
    builder = BUILDERS[name]
    model, tok, extra = builder(folder) if name == "wav2vec2" else builder()
    model.eval()
    model.save_pretrained(folder, safe_serialization=True)
    if tok is not None:
        tok.save_pretrained(folder)
    if "preprocessor" in extra:
        with open(os.path.join(folder, "preprocessor_config.json"), "w") as f:
            json.dump(extra["preprocessor"], f, indent=2, sort_keys=True)
            f.write("\n")
    if "generation_config" in extra:
        extra["generation_config"].save_pretrained(folder)
    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    if not config.get("architectures"):
        raise BuildError("%s: config.json has no architectures" % folder)
    params = sum(p.numel() for p in model.parameters())
    return {"name": name, "folder": name, "model_type": config["model_type"],
            "architectures": config["architectures"], "model_class": extra["model_class"],
            "task": extra["task"], "input": extra["input"], "parameters": params,
            "tokenizer": tok is not None}, time.monotonic() - start


def main(argv):
    args = parse_args(argv)
    try:
        import tokenizers
        import torch
        import transformers
    except ImportError as e:
        print("make_hf_zoo.py: %s (run with the project's venv, "
              "~/.cache/convgate-deps/venv/bin/python)" % e, file=sys.stderr)
        return EXIT_FAILED
    transformers.logging.set_verbosity_error()
    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    entries = []
    for index, name in enumerate(MODELS):
        if name not in args.models:
            continue
        try:
            entry, seconds = build_one(name, index, args.seed, args.out)
            entries.append(entry)
        except Exception as e:  # noqa: BLE001 - any builder failure is reported per model
            print("make_hf_zoo.py: %s: cannot build into %s: %s: %s"
                  % (name, os.path.join(args.out, name), type(e).__name__, e), file=sys.stderr)
            return EXIT_FAILED
        print("[hf-zoo] built %s (%d parameters, %.1f s)"
              % (name, entry["parameters"], seconds), file=sys.stderr)
    manifest = {"seed": args.seed, "versions": {"transformers": transformers.__version__,
                                                "tokenizers": tokenizers.__version__,
                                                "torch": torch.__version__},
                "models": entries}
    path = os.path.join(args.out, "manifest.json")
    with open(path, "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write("\n")
    print(json.dumps({"manifest": path, "models": [e["name"] for e in entries]}))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
