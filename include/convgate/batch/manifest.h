// A batch manifest: the models `convgate batch` verifies, each entry turned into one convgate
// command line (verify, compare or run) run as its own process.
//
// Three formats, told by the extension (.json, .yaml / .yml; anything else: JSON when the first
// character that is not a space is '[', else a text list):
//   JSON   the model file verification pipeline's list: [{"model_id", "file_path", "model_type"}]
//          (each entry runs `convgate run FILE_PATH`; "id" may be given too).
//   text   one model path per line; '#' starts a comment; blank lines are skipped (`run PATH`).
//   YAML   {defaults: {...}, models: [{...}, ...]} or a bare list; an entry takes what one verify
//          takes (docs/fleet.md): id, model_id, source, to, target, command, params, inputs,
//          policy, per_node, timeout, model_type, flags (other flags, verbatim). `defaults` keys
//          apply to every entry that does not set them itself.
// Paths are relative to the manifest's folder. An entry's id is its `id`, else its model_id, else
// derived from its source path (the path without extension, characters other than
// [A-Za-z0-9._-] as '_').
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "convgate/core/status.h"

namespace convgate::batch {

struct ManifestEntry {
  std::string id;
  std::string model_id;             // the manifest's model_id, else the id
  std::filesystem::path source;     // resolved against the manifest's folder
  std::filesystem::path target;     // empty unless `target:` (or compare)
  std::string to;                   // the conversion kind, empty unless `to:`
  std::string converter;            // `converter:` an external converter 'CMD {src} {out}'
  std::string command = "run";      // "verify", "compare", "run"
  std::string declared_model_type;  // model_type given in the manifest, else ""
  // The convgate flags the entry's settings become (after the command and its positionals, before
  // --out), in a fixed order so equal entries give equal lists.
  std::vector<std::string> flags;
  // Other files the job reads (a policy file, --load-inputs): checked before any work too.
  std::vector<std::filesystem::path> extra_files;
  double timeout_seconds = 0.0;  // 0: the batch's --timeout
  int line = 0;                  // 1-based line of the entry in the manifest (0: unknown)

  // The job's command line after the program name, without --out.
  std::vector<std::string> Args() const;
  // sha256 over the id, Args() and the timeout: equal for the same entry running the same command.
  std::string ContentHash() const;
  // "which conversion": "to:fp16", "target:converted.onnx", "" for run.
  std::string Conversion() const;
  // The conversion's parameters: every `--param NAME=VALUE` of flags (`params:`, or given
  // verbatim in `flags:`), by name. A name given twice keeps its first value (the job then stops
  // with a usage error anyway).
  std::map<std::string, std::string> Params() const;
};

struct Manifest {
  std::filesystem::path path;
  std::vector<ManifestEntry> entries;  // in manifest order
};

// Reads and validates the whole manifest. InvalidArgument, naming the file, the line and the entry
// ("m.yaml:7: entry 'b': unknown key 'tolerance'"), for: a file that does not parse, an unknown
// key, a value of the wrong kind, an entry without a source (or model_id / file_path), compare
// without a target, both `to` and `target`, and ids given twice (both lines named). NotFound when
// the manifest itself is missing.
Result<Manifest> ReadManifest(const std::filesystem::path& path);

// The same from text, as if read from `path` (its folder resolves relative paths).
Result<Manifest> ParseManifest(const std::string& text, const std::filesystem::path& path);

// Shard `index` of `count` (0 <= index < count): the entries ranked by the FNV-1a 64 hash of their
// id, cut into `count` runs whose lengths differ by at most one. Appending an entry moves at most
// count - 1 others between shards (resume finds a moved entry's verdict in the store by its key).
// Manifest order kept.
std::vector<ManifestEntry> SelectShard(const std::vector<ManifestEntry>& entries, int index,
                                       int count);
// The shard of each entry (same order) under SelectShard's rule.
std::vector<int> ShardOfEntries(const std::vector<ManifestEntry>& entries, int count);
uint64_t ShardHash(const std::string& entry_id);

// The resume key: sha256 of the entry's content hash, its model files' sha256 and the convgate
// version. Equal keys mean the same job on the same bytes with the same tool.
std::string EntryKey(const ManifestEntry& entry, const std::string& model_sha256,
                     const std::string& convgate_version);

// The convgate version every key and run row carries, "0.1.0 (4a1a664fcf30)": one spelling, since
// a batch and the Slurm summary that looks its keys up must agree on it byte for byte.
std::string VersionText();

}  // namespace convgate::batch
