// What a file or folder is, told from its content (magic bytes, a zip's member names, a folder's
// layout) rather than its extension, so that a command can say what it was given before a parser
// fails on it: a TorchScript archive named model.onnx is still a TorchScript archive. ONNX itself
// has no magic bytes (a ModelProto is bare protobuf), so it is what is left: kOther.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/core/status.h"

namespace convgate::io {

enum class FileFormat {
  kOther,            // none of the below (ONNX models, and anything unknown)
  kEmpty,            // a file of 0 bytes
  kDirectory,        // a folder that is none of the folder formats below
  kOnnxTestCase,     // a folder holding test_data_set_N folders (model.onnx optional)
  kOnnxTestDataSet,  // one test_data_set_N folder
  kTfSavedModel,     // a folder holding saved_model.pb
  kNpy,              // "\x93NUMPY"
  kNpz,              // a zip whose members are all .npy (or none)
  kTorchScript,      // a zip with <root>/constants.pkl or <root>/code/ (torch.jit.save)
  kPyTorchZip,       // a zip with <root>/data.pkl and no code (torch.save since PyTorch 1.6)
  kPyTorchLegacy,    // pickles led by PyTorch's magic number (torch.save before 1.6)
  kPickle,           // another Python pickle (protocol 2 or later)
  kSafetensors,      // 8-byte little-endian header length, then a JSON header
  kOpenVinoXml,      // OpenVINO IR: XML with a <net> root; the weights are in a .bin beside it
  kKerasZip,         // a zip with config.json and model.weights.h5 (Keras 3 .keras)
  kZip,              // another zip archive
  kHdf5,             // "\x89HDF\r\n\x1a\n" (Keras .h5 and other HDF5 files)
  kTfLite,           // a TensorFlow Lite flatbuffer ("TFL3" at byte 4)
  kGguf,             // "GGUF" (llama.cpp)
};

struct ZipMember {
  std::string name;
  uint64_t size = 0;  // uncompressed bytes
};

struct SniffedFile {
  FileFormat format = FileFormat::kOther;
  uint64_t size = 0;               // file bytes (0 for folders)
  std::vector<ZipMember> members;  // for the zip formats, in archive order
  int pickle_protocol = 0;         // for kPickle and kPyTorchLegacy
  std::string safetensors_header;  // for kSafetensors: the JSON header text
};

// Reads as little of `path` as it takes to tell its format (the zip directory for zip files, the
// header for safetensors). NotFound for a missing path; DataLoss naming the file for a zip whose
// directory cannot be read (a truncated archive) or a safetensors header longer than the file;
// FailedPrecondition naming it for a path that is neither a folder nor a regular file (a FIFO, a
// device: core/file_util.h InputFile).
Result<SniffedFile> SniffFile(const std::filesystem::path& path);

// The bytes of member `name` of the zip archive at `path`. NotFound when there is no such member,
// InvalidArgument when it is larger than `max_bytes`, DataLoss when it cannot be read; each naming
// the archive and the member. FailedPrecondition when `path` is not a regular file.
Result<std::string> ReadZipMember(const std::filesystem::path& path, const std::string& name,
                                  uint64_t max_bytes);

// "a TorchScript archive (torch.jit.save)", "an OpenVINO IR model", ... for messages.
std::string_view FileFormatName(FileFormat format);

}  // namespace convgate::io
