#include "convgate/io/npz.h"

#include <fcntl.h>
#include <unistd.h>
#include <zip.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "convgate/core/file_util.h"
#include "convgate/core/units.h"
#include "convgate/io/npy.h"
#include "io/npy_reader.h"
#include "io/zip_directory.h"

namespace convgate::io {
namespace {

constexpr std::string_view kNpySuffix = ".npy";
// Deflate cannot expand data by more than 1032:1 (RFC 1951: a 258-byte match costs at least two
// bits). A member claiming more is corrupt or a zip bomb; refusing it avoids a huge allocation.
constexpr zip_uint64_t kMaxDeflateRatio = 1032;
// What np.savez() with no arrays writes: an end-of-central-directory record and nothing else.
// libzip deletes an archive that ends up empty instead, so that case is written by hand.
constexpr std::string_view kEmptyZip("PK\x05\x06\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 22);

struct ZipCloser {
  void operator()(zip_t* archive) const { zip_discard(archive); }
};
using ZipArchive = std::unique_ptr<zip_t, ZipCloser>;

struct ZipFileCloser {
  void operator()(zip_file_t* file) const { zip_fclose(file); }
};
using ZipFile = std::unique_ptr<zip_file_t, ZipFileCloser>;

std::string ZipErrorString(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

// Maps a libzip open failure: a missing file is NotFound, an unreadable one Unavailable, and
// anything libzip could read but not make sense of is DataLoss.
Status OpenError(std::string_view what, int code) {
  const std::string message = std::string(what) + ": " + ZipErrorString(code);
  switch (code) {
    case ZIP_ER_NOENT:
      return Status::NotFound(message);
    case ZIP_ER_OPEN:
    case ZIP_ER_READ:
    case ZIP_ER_SEEK:
    case ZIP_ER_MEMORY:
      return Status::Unavailable(message);
    default:
      return Status::DataLoss(message + " (not a valid .npz archive)");
  }
}

Status MemberOpenError(std::string_view member, zip_t* archive) {
  const int code = zip_error_code_zip(zip_get_error(archive));
  const std::string message = std::string(member) + ": " + zip_strerror(archive);
  if (code == ZIP_ER_COMPNOTSUPP || code == ZIP_ER_ENCRNOTSUPP || code == ZIP_ER_NOPASSWD) {
    return Status::Unimplemented(message);
  }
  return Status::DataLoss(message);
}

// The declared sizes decide how much memory a member gets, so they are checked against what the
// archive can hold before anything is allocated: a forged header must not cost gigabytes.
Status CheckMemberSizes(const zip_stat_t& stat, zip_uint64_t archive_size,
                        std::string_view member) {
  if (!(stat.valid & ZIP_STAT_SIZE) || !(stat.valid & ZIP_STAT_COMP_SIZE)) {
    return Status::DataLoss(std::string(member) + ": sizes unknown");
  }
  if (stat.comp_size > archive_size) {
    return Status::DataLoss(std::string(member) + ": claims " + std::to_string(stat.comp_size) +
                            " compressed bytes in a " + std::to_string(archive_size) +
                            "-byte archive");
  }
  const bool bounded = stat.comp_method == ZIP_CM_STORE || stat.comp_method == ZIP_CM_DEFLATE;
  if (bounded && stat.size / kMaxDeflateRatio > stat.comp_size + 1) {
    return Status::DataLoss(std::string(member) + ": claims " + std::to_string(stat.size) +
                            " bytes from " + std::to_string(stat.comp_size) + " compressed bytes");
  }
  return Status::OK();
}

// A member's declared size against the limits, before anything is inflated: the .npy header is
// at most internal::kMaxNpyHeaderBytes, so a member declaring more than that plus
// max_tensor_bytes holds a tensor over the limit whatever its header says.
Status CheckMemberLimit(const zip_stat_t& stat, const Limits& limits, std::string_view member) {
  const uint64_t max_member = static_cast<uint64_t>(std::max<int64_t>(limits.max_tensor_bytes, 0)) +
                              internal::kMaxNpyHeaderBytes;
  if (stat.size <= max_member) return Status::OK();
  return Status::FailedPrecondition(std::string(member) + ": declares " +
                                    FormatBytes(static_cast<int64_t>(stat.size)) +
                                    " uncompressed, over the limit of " +
                                    FormatBytes(limits.max_tensor_bytes) + " (--max-tensor-bytes)");
}

// Inflates one member straight into its tensor (npy_reader.h): the header is read first and
// checked, then the data lands in the tensor's buffer, with no copy of the member in between.
// CheckArchiveLimits has held its declared size to the limits, and ReadMembers checked its sizes
// against the archive (CheckMemberSizes).
// Reading past the declared size at the end makes libzip check the CRC.
Result<Tensor> ReadMember(zip_t* archive, zip_uint64_t index, const zip_stat_t& stat,
                          const Limits& limits, std::string_view member) {
  ZipFile file(zip_fopen_index(archive, index, 0));
  if (!file) return MemberOpenError(member, archive);
  const internal::NpyByteSource source = [&](std::span<std::byte> dst) -> Status {
    size_t done = 0;
    while (done < dst.size()) {
      const zip_int64_t n = zip_fread(file.get(), dst.data() + done, dst.size() - done);
      if (n <= 0) {
        const std::string problem =
            n < 0 ? zip_file_strerror(file.get()) : "unexpected end of data";
        return Status::DataLoss(std::string(member) + ": " + problem);
      }
      done += static_cast<size_t>(n);
    }
    return Status::OK();
  };
  CONVGATE_ASSIGN_OR_RETURN(
      Tensor tensor, internal::ReadNpyFrom(source, stat.size, limits.max_tensor_bytes, member));
  char extra = 0;
  const zip_int64_t n = zip_fread(file.get(), &extra, 1);
  if (n != 0) {
    const std::string problem = n < 0 ? zip_file_strerror(file.get()) : "longer than declared";
    return Status::DataLoss(std::string(member) + ": " + problem);
  }
  return tensor;
}

// zlib's CRC-32 of `bytes`, in pieces on all cores and combined (crc32_combine): checking a stored
// member is the one pass over it that reading in place still makes, and on one core it would cost
// as much as the comparison.
uint32_t Crc32(std::span<const std::byte> bytes) {
  constexpr size_t kMinPiece = size_t{4} << 20;
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t pieces = std::clamp<size_t>(bytes.size() / kMinPiece, 1, cores);
  const size_t piece = bytes.size() / pieces;
  const auto crc_of = [&](size_t idx) {
    const size_t begin = idx * piece;
    const size_t end = idx + 1 == pieces ? bytes.size() : begin + piece;
    return crc32_z(0, reinterpret_cast<const Bytef*>(bytes.data() + begin), end - begin);
  };
  std::vector<uLong> crcs(pieces);
  std::vector<std::thread> threads;
  for (size_t idx = 1; idx < pieces; ++idx) {
    threads.emplace_back([&, idx] { crcs[idx] = crc_of(idx); });
  }
  crcs[0] = crc_of(0);
  for (std::thread& thread : threads) thread.join();
  uLong crc = crcs[0];
  for (size_t idx = 1; idx < pieces; ++idx) {
    const size_t length = idx + 1 == pieces ? bytes.size() - idx * piece : piece;
    crc = crc32_combine64(crc, crcs[idx], static_cast<z_off64_t>(length));
  }
  return static_cast<uint32_t>(crc);
}

// The archive mapped in memory, with where each member's data lies in it: stored members are then
// read where they lie.
struct MappedArchive {
  std::shared_ptr<MappedFile> file;
  std::vector<internal::ZipMemberData> members;
};

// A stored member of a mapped archive: its CRC checked, then read through npy_reader.h with the
// data adopted in place, not copied. nullopt when the directory and libzip disagree about it, so
// that libzip reads it (and says what is wrong).
std::optional<Result<Tensor>> ReadMappedMember(const MappedArchive& mapped, zip_uint64_t index,
                                               const zip_stat_t& stat, const Limits& limits,
                                               std::string_view member) {
  const bool plain = stat.comp_method == ZIP_CM_STORE && (stat.valid & ZIP_STAT_CRC) &&
                     (stat.valid & ZIP_STAT_ENCRYPTION_METHOD) &&
                     stat.encryption_method == ZIP_EM_NONE && stat.size == stat.comp_size;
  if (!plain || index >= mapped.members.size() || mapped.members[index].size != stat.comp_size) {
    return std::nullopt;
  }
  const std::span<std::byte> bytes =
      mapped.file->bytes().subspan(mapped.members[index].offset, stat.size);
  if (Crc32(bytes) != stat.crc) {
    return Status::DataLoss(std::string(member) + ": CRC error (the member's bytes are damaged)");
  }
  return internal::ReadMappedNpy({bytes, mapped.file}, limits.max_tensor_bytes, member);
}

// Every member's declared size against max_tensor_bytes, then their sum against max_run_bytes
// (they are all held once read, so many members each under the first are no way around it),
// before the first member is inflated.
Status CheckArchiveLimits(zip_t* archive, const Limits& limits, std::string_view what) {
  const zip_int64_t count = zip_get_num_entries(archive, 0);
  uint64_t total = 0;
  for (zip_int64_t entry_idx = 0; entry_idx < count; ++entry_idx) {
    zip_stat_t stat;
    if (zip_stat_index(archive, static_cast<zip_uint64_t>(entry_idx), 0, &stat) != 0 ||
        !(stat.valid & ZIP_STAT_SIZE) || !(stat.valid & ZIP_STAT_NAME)) {
      continue;  // ReadMembers reports it
    }
    CONVGATE_RETURN_IF_ERROR(
        CheckMemberLimit(stat, limits, std::string(what) + " entry '" + stat.name + "'"));
    if (__builtin_add_overflow(total, stat.size, &total)) total = UINT64_MAX;
  }
  if (total <= static_cast<uint64_t>(std::max<int64_t>(limits.max_run_bytes, 0))) {
    return Status::OK();
  }
  return Status::FailedPrecondition(
      std::string(what) + ": its members declare " +
      FormatBytes(static_cast<int64_t>(std::min<uint64_t>(total, INT64_MAX))) +
      " uncompressed in all, over the limit of " + FormatBytes(limits.max_run_bytes) +
      " (--max-run-bytes)");
}

Result<TensorMap> ReadMembers(zip_t* archive, zip_uint64_t archive_size, const Limits& limits,
                              std::string_view what, const MappedArchive* mapped = nullptr) {
  CONVGATE_RETURN_IF_ERROR(CheckArchiveLimits(archive, limits, what));
  const zip_int64_t count = zip_get_num_entries(archive, 0);
  TensorMap tensors;
  for (zip_int64_t entry_idx = 0; entry_idx < count; ++entry_idx) {
    const zip_uint64_t index = static_cast<zip_uint64_t>(entry_idx);
    zip_stat_t stat;
    if (zip_stat_index(archive, index, 0, &stat) != 0 || !(stat.valid & ZIP_STAT_NAME)) {
      return Status::DataLoss(std::string(what) + ": entry " + std::to_string(entry_idx) + ": " +
                              zip_strerror(archive));
    }
    const std::string_view name = stat.name;
    const std::string member = std::string(what) + " entry '" + std::string(name) + "'";
    if (name.ends_with('/') && stat.size == 0) continue;
    if (!name.ends_with(kNpySuffix)) {
      return Status::DataLoss(member + ": not a .npy member (np.savez writes only NAME.npy)");
    }
    CONVGATE_RETURN_IF_ERROR(CheckMemberSizes(stat, archive_size, member));
    std::optional<Result<Tensor>> in_place;
    if (mapped != nullptr) in_place = ReadMappedMember(*mapped, index, stat, limits, member);
    CONVGATE_ASSIGN_OR_RETURN(
        Tensor tensor,
        in_place ? std::move(*in_place) : ReadMember(archive, index, stat, limits, member));
    std::string tensor_name(name.substr(0, name.size() - kNpySuffix.size()));
    if (tensors.Contains(tensor_name)) {
      return Status::DataLoss(member + ": a second member with the same name");
    }
    CONVGATE_RETURN_IF_ERROR(tensors.Insert(std::move(tensor_name), std::move(tensor)));
  }
  return tensors;
}

// The modification time of every member: 1980-01-01 00:00, the zip format's earliest date and what
// np.savez stores (Python's zipfile default), so the same tensors always give the same bytes. zip
// stores local time, hence mktime rather than a fixed time_t.
time_t FixedMtime() {
  std::tm date{};
  date.tm_year = 80;
  date.tm_mday = 1;
  date.tm_isdst = -1;
  return std::mktime(&date);
}

// Adds one member whose bytes are the .npy header followed by the data (a numeric tensor's own
// buffer, not copied): libzip reads both fragments when the archive is closed.
// Adds `source` (taken over, freed on failure) as member `name`.npy, stored or deflated, with the
// fixed mtime.
Status AddSource(zip_t* archive, const std::string& name, zip_source_t* source,
                 const NpzWriteOptions& options) {
  const zip_int64_t index =
      zip_file_add(archive, (name + ".npy").c_str(), source, ZIP_FL_ENC_UTF_8);
  if (index < 0) {
    zip_source_free(source);
    return Status::Unavailable("npz member '" + name + "': " + zip_strerror(archive));
  }
  const zip_uint64_t member = static_cast<zip_uint64_t>(index);
  if (zip_set_file_compression(archive, member, options.compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE,
                               0) != 0 ||
      zip_file_set_mtime(archive, member, FixedMtime(), 0) != 0) {
    return Status::Unavailable("npz member '" + name + "': " + zip_strerror(archive));
  }
  return Status::OK();
}

Status AddMember(zip_t* archive, const std::string& name, const std::string& header,
                 std::span<const std::byte> data, const NpzWriteOptions& options) {
  const zip_buffer_fragment_t fragments[] = {
      {reinterpret_cast<zip_uint8_t*>(const_cast<char*>(header.data())), header.size()},
      {reinterpret_cast<zip_uint8_t*>(const_cast<std::byte*>(data.data())), data.size()},
  };
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_fragment_create(fragments, 2, 0, &error);
  if (source == nullptr) {
    Status status = Status::Unavailable("npz member '" + name + "': " + zip_error_strerror(&error));
    zip_error_fini(&error);
    return status;
  }
  zip_error_fini(&error);
  return AddSource(archive, name, source, options);
}

// Every member's .npy header (and string data) before anything is written, so that a string that
// numpy cannot hold fails the write without leaving a temporary file behind.
Result<std::vector<NpyParts>> SerializeMembers(const std::filesystem::path& path,
                                               const TensorMap& tensors) {
  std::vector<NpyParts> parts;
  parts.reserve(tensors.size());
  for (const TensorMap::Entry& entry : tensors) {
    Result<NpyParts> member = SerializeNpyParts(entry.tensor);
    if (!member.ok()) {
      return member.status().WithContext("cannot write " + path.string() + ": member '" +
                                         entry.name + "'");
    }
    parts.push_back(std::move(member).value());
  }
  return parts;
}

// The fragments point into `parts` until zip_close, so it must not change while this runs.
Status WriteArchive(const std::filesystem::path& tmp, const TensorMap& tensors,
                    const std::vector<NpyParts>& parts, const NpzWriteOptions& options) {
  int code = 0;
  ZipArchive archive(zip_open(tmp.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code));
  if (!archive) {
    return Status::Unavailable("cannot create " + tmp.string() + ": " + ZipErrorString(code));
  }
  for (size_t member_idx = 0; member_idx < tensors.size(); ++member_idx) {
    const Tensor& tensor = tensors[member_idx].tensor;
    const std::string& string_data = parts[member_idx].string_data;
    const std::span<const std::byte> data =
        tensor.dtype() == DType::kString
            ? std::as_bytes(std::span<const char>(string_data.data(), string_data.size()))
            : tensor.bytes();
    CONVGATE_RETURN_IF_ERROR(AddMember(archive.get(), tensors[member_idx].name,
                                       parts[member_idx].header, data, options));
  }
  if (zip_close(archive.get()) != 0) {
    return Status::Unavailable("cannot write " + tmp.string() + ": " + zip_strerror(archive.get()));
  }
  archive.release();  // zip_close freed it
  return Status::OK();
}

}  // namespace

Result<TensorMap> ParseNpz(std::string_view bytes, std::string_view what, const Limits& limits) {
  // libzip treats an empty buffer as a new, empty archive; numpy rejects an empty file.
  if (bytes.empty()) return Status::DataLoss(std::string(what) + ": empty file, not a zip archive");
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  zip_t* raw = source == nullptr ? nullptr : zip_open_from_source(source, ZIP_RDONLY, &error);
  const int code = zip_error_code_zip(&error);
  zip_error_fini(&error);
  if (raw == nullptr) {
    zip_source_free(source);  // not taken over by a failed zip_open_from_source
    return OpenError(what, code);
  }
  ZipArchive archive(raw);
  return ReadMembers(archive.get(), bytes.size(), limits, what);
}

Result<TensorMap> ReadNpz(const std::filesystem::path& path, const Limits& limits) {
  // The archive's own size is not limited: each member's declared size is, before it is read.
  CONVGATE_ASSIGN_OR_RETURN(InputFile file,
                            InputFile::Open(path, std::numeric_limits<uint64_t>::max(), ""));
  if (file.size() == 0) return Status::DataLoss(path.string() + ": empty file, not a zip archive");
  const uint64_t size = file.size();
  // Mapped before libzip takes the descriptor, so stored members (np.savez's default) are
  // compared where the page cache holds them; libzip still reads the directory and checks it.
  MappedArchive mapped;
  CONVGATE_ASSIGN_OR_RETURN(mapped.file, file.Map());
  int code = 0;
  // The descriptor InputFile checked is the one libzip reads: the path cannot be swapped for a
  // FIFO in between. zip_fdopen closes it with the archive (and leaves it to us on failure).
  ZipArchive archive(zip_fdopen(file.fd(), ZIP_RDONLY, &code));
  if (!archive) return OpenError(path.string(), code);
  file.Release();
  mapped.members = internal::ZipMemberOffsets(mapped.file->bytes())
                       .value_or(std::vector<internal::ZipMemberData>());
  return ReadMembers(archive.get(), size, limits, path.string(), &mapped);
}

Result<uint64_t> NpzDeclaredBytes(const std::filesystem::path& path) {
  CONVGATE_ASSIGN_OR_RETURN(InputFile file,
                            InputFile::Open(path, std::numeric_limits<uint64_t>::max(), ""));
  if (file.size() == 0) return Status::DataLoss(path.string() + ": empty file, not a zip archive");
  int code = 0;
  ZipArchive archive(zip_fdopen(file.fd(), ZIP_RDONLY, &code));
  if (!archive) return OpenError(path.string(), code);
  file.Release();
  // Only the central directory is read: no member is opened, let alone inflated.
  const zip_int64_t count = zip_get_num_entries(archive.get(), 0);
  uint64_t total = 0;
  for (zip_int64_t entry_idx = 0; entry_idx < count; ++entry_idx) {
    zip_stat_t stat;
    if (zip_stat_index(archive.get(), static_cast<zip_uint64_t>(entry_idx), 0, &stat) != 0 ||
        !(stat.valid & ZIP_STAT_SIZE)) {
      continue;  // ReadNpz reports it
    }
    if (__builtin_add_overflow(total, stat.size, &total)) return UINT64_MAX;
  }
  return total;
}

Status WriteNpz(const std::filesystem::path& path, const TensorMap& tensors,
                const NpzWriteOptions& options) {
  if (tensors.empty()) return WriteFileAtomic(path, kEmptyZip);
  CONVGATE_ASSIGN_OR_RETURN(const std::vector<NpyParts> parts, SerializeMembers(path, tensors));
  // libzip writes a temporary file of its own (mkstemp) and renames it over the pending file,
  // which exists, so libzip never opens a name someone else could have chosen.
  CONVGATE_ASSIGN_OR_RETURN(PendingFile pending, PendingFile::Create(path));
  pending.CloseFd();
  CONVGATE_RETURN_IF_ERROR(WriteArchive(pending.path(), tensors, parts, options));
  return pending.Commit(options.sync);
}

Status WriteNpzFromFiles(const std::filesystem::path& path,
                         const std::vector<NpzMemberFile>& members) {
  if (members.empty()) return WriteFileAtomic(path, kEmptyZip);
  CONVGATE_ASSIGN_OR_RETURN(PendingFile pending, PendingFile::Create(path));
  pending.CloseFd();
  int code = 0;
  ZipArchive archive(zip_open(pending.path().c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code));
  if (!archive) {
    return Status::Unavailable("cannot create " + pending.path().string() + ": " +
                               ZipErrorString(code));
  }
  for (const NpzMemberFile& member : members) {
    // Read when the archive is closed, one member at a time.
    zip_source_t* source = zip_source_file(archive.get(), member.file.c_str(), 0, -1);
    if (source == nullptr) {
      return Status::Unavailable("npz member '" + member.name + "' from " + member.file.string() +
                                 ": " + zip_strerror(archive.get()));
    }
    CONVGATE_RETURN_IF_ERROR(AddSource(archive.get(), member.name, source, NpzWriteOptions{}));
  }
  if (zip_close(archive.get()) != 0) {
    return Status::Unavailable("cannot write " + pending.path().string() + ": " +
                               zip_strerror(archive.get()));
  }
  archive.release();  // zip_close freed it
  return pending.Commit();
}

}  // namespace convgate::io
