#include "convgate/io/file_format.h"

#include <unistd.h>
#include <zip.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <system_error>

#include "convgate/core/file_util.h"
#include "convgate/io/test_case.h"

namespace convgate::io {
namespace {

namespace fs = std::filesystem;

// Enough to see past an XML prolog and comments to OpenVINO's <net> element.
constexpr size_t kHeadBytes = 64 * 1024;
// The safetensors format caps its header at 100 MB (safetensors' MAX_HEADER_SIZE).
constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;
// torch.save before PyTorch 1.6 pickles this number first (torch/serialization.py MAGIC_NUMBER,
// 0x1950a86a20f9469cfc6c) with protocol 2: PROTO 2, LONG1 of 10 bytes, little-endian.
constexpr std::string_view kTorchLegacyMagic(
    "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 14);

struct ZipCloser {
  void operator()(zip_t* archive) const { zip_discard(archive); }
};

Result<std::string> ReadHead(InputFile& file) {
  std::string head(static_cast<size_t>(std::min<uint64_t>(file.size(), kHeadBytes)), '\0');
  CONVGATE_RETURN_IF_ERROR(file.ReadExactly(std::as_writable_bytes(std::span(head))));
  return head;
}

// Opens the zip archive `file` holds through a descriptor of its own, so the file that was
// checked to be regular is the one libzip reads. Null with `error` set on failure.
zip_t* OpenZip(const InputFile& file, int& error) {
  const int fd = ::dup(file.fd());
  if (fd < 0) {
    error = ZIP_ER_OPEN;
    return nullptr;
  }
  zip_t* archive = zip_fdopen(fd, ZIP_RDONLY, &error);
  if (archive == nullptr) ::close(fd);  // zip_fdopen closes it only on success
  return archive;
}

uint64_t LittleEndian64(std::string_view bytes) {
  uint64_t value = 0;
  for (int idx = 7; idx >= 0; --idx) value = (value << 8) | static_cast<uint8_t>(bytes[idx]);
  return value;
}

Result<std::vector<ZipMember>> ListZip(const InputFile& file) {
  const fs::path& path = file.path();
  int error = 0;
  std::unique_ptr<zip_t, ZipCloser> archive(OpenZip(file, error));
  if (!archive) {
    zip_error_t zip_error;
    zip_error_init_with_code(&zip_error, error);
    const std::string text = zip_error_strerror(&zip_error);
    zip_error_fini(&zip_error);
    return Status::DataLoss(path.string() +
                            ": starts like a zip archive, but its directory cannot be read (the "
                            "file may be truncated): " +
                            text);
  }
  std::vector<ZipMember> members;
  const zip_int64_t count = zip_get_num_entries(archive.get(), 0);
  for (zip_int64_t idx = 0; idx < count; ++idx) {
    zip_stat_t stat;
    if (zip_stat_index(archive.get(), static_cast<zip_uint64_t>(idx), 0, &stat) != 0 ||
        !(stat.valid & ZIP_STAT_NAME)) {
      continue;
    }
    members.push_back({stat.name, (stat.valid & ZIP_STAT_SIZE) ? stat.size : 0});
  }
  return members;
}

// Which zip-based format `members` make: PyTorch writes every record under one root folder.
FileFormat ZipFormat(const std::vector<ZipMember>& members) {
  bool all_npy = true, code = false, constants = false, data_pkl = false;
  bool keras_config = false, keras_weights = false;
  for (const ZipMember& member : members) {
    const std::string_view name = member.name;
    if (name.ends_with('/')) continue;
    all_npy &= name.ends_with(".npy");
    code |= name.find("/code/") != std::string_view::npos;
    constants |= name.ends_with("/constants.pkl") || name == "constants.pkl";
    data_pkl |= name.ends_with("/data.pkl") || name == "data.pkl";
    keras_config |= name == "config.json";
    keras_weights |= name == "model.weights.h5";
  }
  if (all_npy) return FileFormat::kNpz;
  if (code || constants) return FileFormat::kTorchScript;
  if (data_pkl) return FileFormat::kPyTorchZip;
  if (keras_config && keras_weights) return FileFormat::kKerasZip;
  return FileFormat::kZip;
}

// An OpenVINO IR: XML (after an optional byte-order mark and prolog) with a <net> element.
bool IsOpenVinoXml(std::string_view head) {
  if (head.starts_with("\xef\xbb\xbf")) head.remove_prefix(3);
  const size_t first = head.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || head[first] != '<') return false;
  return head.find("<net ") != std::string_view::npos ||
         head.find("<net>") != std::string_view::npos;
}

FileFormat FolderFormat(const fs::path& path) {
  std::error_code ec;
  if (IsTestDataSetDir(path)) return FileFormat::kOnnxTestDataSet;
  if (IsTestCasePath(path)) return FileFormat::kOnnxTestCase;
  if (fs::is_regular_file(path / "saved_model.pb", ec)) return FileFormat::kTfSavedModel;
  return FileFormat::kDirectory;
}

// Formats told by their first bytes alone.
FileFormat MagicFormat(std::string_view head, SniffedFile& sniffed) {
  if (head.starts_with("\x93NUMPY")) return FileFormat::kNpy;
  if (head.starts_with("\x89HDF\r\n\x1a\n")) return FileFormat::kHdf5;
  if (head.starts_with("GGUF")) return FileFormat::kGguf;
  if (head.size() >= 8 && head.substr(4, 4) == "TFL3") return FileFormat::kTfLite;
  if (head.starts_with(kTorchLegacyMagic)) {
    sniffed.pickle_protocol = 2;
    return FileFormat::kPyTorchLegacy;
  }
  // PROTO opcode (0x80) and a protocol number: pickles of protocol 2 to 5. Protocols 0 and 1 have
  // no header to tell them by.
  if (head.size() >= 2 && head[0] == '\x80' && head[1] >= 2 && head[1] <= 5) {
    sniffed.pickle_protocol = head[1];
    return FileFormat::kPickle;
  }
  if (IsOpenVinoXml(head)) return FileFormat::kOpenVinoXml;
  return FileFormat::kOther;
}

// Safetensors when the first 8 bytes give a header length that fits the file and the header is a
// JSON object; reads the header then.
Result<bool> ReadSafetensorsHeader(InputFile& file, std::string_view head, SniffedFile& sniffed) {
  const fs::path& path = file.path();
  // A file named .safetensors whose header is not there is a broken safetensors file, not "not
  // a valid ONNX model" (what an unrecognized file is tried as).
  const bool named = path.extension() == ".safetensors";
  if (head.size() < 10 || head[8] != '{') {
    if (!named) return false;
    return Status::DataLoss(path.string() +
                            ": not a safetensors file: no JSON header after the 8-byte length");
  }
  const uint64_t length = LittleEndian64(head);
  if (length < 2 || length > kMaxSafetensorsHeader) {
    if (!named) return false;
    return Status::DataLoss(path.string() + ": a safetensors header length of " +
                            std::to_string(length) + " bytes" +
                            (length < 2 ? "" : ", over safetensors' 100 MB") +
                            " (the length is not what the file holds)");
  }
  if (length > sniffed.size - 8) {
    return Status::DataLoss(path.string() + ": a safetensors header of " + std::to_string(length) +
                            " bytes, but the file has only " + std::to_string(sniffed.size - 8) +
                            " after the length (the file may be truncated)");
  }
  // The head holds the first bytes; the header may go on past it.
  if (::lseek(file.fd(), 8, SEEK_SET) != 8) {
    return Status::Unavailable("cannot read " + path.string() + ": " + std::strerror(errno));
  }
  sniffed.safetensors_header.resize(static_cast<size_t>(length));
  CONVGATE_RETURN_IF_ERROR(
      file.ReadExactly(std::as_writable_bytes(std::span(sniffed.safetensors_header))));
  return true;
}

}  // namespace

Result<SniffedFile> SniffFile(const fs::path& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status))
    return Status::NotFound("no such file or folder: " + path.string());
  SniffedFile sniffed;
  if (fs::is_directory(status)) {
    sniffed.format = FolderFormat(path);
    return sniffed;
  }
  // A FIFO or a device has no format to tell and would block or never end: refused here.
  CONVGATE_ASSIGN_OR_RETURN(InputFile file,
                            InputFile::Open(path, std::numeric_limits<uint64_t>::max(), ""));
  sniffed.size = file.size();
  if (sniffed.size == 0) {
    sniffed.format = FileFormat::kEmpty;
    return sniffed;
  }
  CONVGATE_ASSIGN_OR_RETURN(std::string head, ReadHead(file));
  if (head.starts_with("PK\x03\x04") || head.starts_with("PK\x05\x06")) {
    CONVGATE_ASSIGN_OR_RETURN(sniffed.members, ListZip(file));
    sniffed.format = ZipFormat(sniffed.members);
    return sniffed;
  }
  sniffed.format = MagicFormat(head, sniffed);
  if (sniffed.format != FileFormat::kOther) return sniffed;
  CONVGATE_ASSIGN_OR_RETURN(bool safetensors, ReadSafetensorsHeader(file, head, sniffed));
  if (safetensors) sniffed.format = FileFormat::kSafetensors;
  return sniffed;
}

Result<std::string> ReadZipMember(const fs::path& path, const std::string& name,
                                  uint64_t max_bytes) {
  const std::string what = path.string() + " member '" + name + "'";
  CONVGATE_ASSIGN_OR_RETURN(const InputFile zip_file,
                            InputFile::Open(path, std::numeric_limits<uint64_t>::max(), ""));
  int error = 0;
  std::unique_ptr<zip_t, ZipCloser> archive(OpenZip(zip_file, error));
  if (!archive) return Status::DataLoss(path.string() + ": not a readable zip archive");
  zip_stat_t stat;
  if (zip_stat(archive.get(), name.c_str(), 0, &stat) != 0 || !(stat.valid & ZIP_STAT_SIZE)) {
    return Status::NotFound(what + ": no such member");
  }
  if (stat.size > max_bytes) {
    return Status::InvalidArgument(what + ": " + std::to_string(stat.size) + " bytes, over " +
                                   std::to_string(max_bytes));
  }
  std::unique_ptr<zip_file_t, decltype(&zip_fclose)> file(zip_fopen(archive.get(), name.c_str(), 0),
                                                          &zip_fclose);
  if (!file) return Status::DataLoss(what + ": " + zip_strerror(archive.get()));
  std::string bytes(static_cast<size_t>(stat.size), '\0');
  const zip_int64_t read = zip_fread(file.get(), bytes.data(), stat.size);
  if (read < 0 || static_cast<uint64_t>(read) != stat.size) {
    return Status::DataLoss(what + ": cannot be read in full (the archive may be truncated)");
  }
  return bytes;
}

std::string_view FileFormatName(FileFormat format) {
  switch (format) {
    case FileFormat::kOther:
      return "an unrecognized file";
    case FileFormat::kEmpty:
      return "an empty file";
    case FileFormat::kDirectory:
      return "a folder";
    case FileFormat::kOnnxTestCase:
      return "an ONNX test case folder";
    case FileFormat::kOnnxTestDataSet:
      return "an ONNX test data set folder";
    case FileFormat::kTfSavedModel:
      return "a TensorFlow SavedModel folder";
    case FileFormat::kNpy:
      return "a NumPy .npy array";
    case FileFormat::kNpz:
      return "a NumPy .npz archive";
    case FileFormat::kTorchScript:
      return "a TorchScript archive (PyTorch zip written by torch.jit.save)";
    case FileFormat::kPyTorchZip:
      return "a PyTorch checkpoint (zip written by torch.save), not TorchScript";
    case FileFormat::kPyTorchLegacy:
      return "a PyTorch checkpoint in the legacy format (torch.save before PyTorch 1.6)";
    case FileFormat::kPickle:
      return "a Python pickle";
    case FileFormat::kSafetensors:
      return "a safetensors file (weights only, no graph)";
    case FileFormat::kOpenVinoXml:
      return "an OpenVINO IR model (.xml, weights in the .bin beside it)";
    case FileFormat::kKerasZip:
      return "a Keras 3 model archive (.keras)";
    case FileFormat::kZip:
      return "a zip archive";
    case FileFormat::kHdf5:
      return "an HDF5 file (a Keras .h5 model or weights, or other HDF5 data)";
    case FileFormat::kTfLite:
      return "a TensorFlow Lite model (flatbuffer)";
    case FileFormat::kGguf:
      return "a GGUF model (llama.cpp)";
  }
  return "an unrecognized file";
}

}  // namespace convgate::io
