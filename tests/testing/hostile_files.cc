#include "testing/hostile_files.h"

#include <zlib.h>

#include <cstdlib>
#include <vector>

#include "convgate/core/shape.h"
#include "convgate/io/npy.h"

namespace convgate::testing {
namespace {

constexpr uint64_t kChunk = uint64_t{1} << 20;

void Put16(std::string& out, uint32_t value) {
  out.push_back(static_cast<char>(value & 0xFF));
  out.push_back(static_cast<char>((value >> 8) & 0xFF));
}

void Put32(std::string& out, uint32_t value) {
  Put16(out, value & 0xFFFF);
  Put16(out, value >> 16);
}

void Put64(std::string& out, uint64_t value) {
  Put32(out, static_cast<uint32_t>(value & 0xFFFFFFFFu));
  Put32(out, static_cast<uint32_t>(value >> 32));
}

// Compresses `input` with `flush` and returns what deflate wrote.
std::string Deflate(z_stream& stream, std::string_view input, int flush) {
  std::string out;
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
  stream.avail_in = static_cast<uInt>(input.size());
  char buffer[1 << 16];
  do {
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof(buffer);
    if (deflate(&stream, flush) == Z_STREAM_ERROR) std::abort();
    out.append(buffer, sizeof(buffer) - stream.avail_out);
  } while (stream.avail_out == 0);
  return out;
}

// The zip64 extra field (APPNOTE.TXT 4.5.3): uncompressed then compressed size.
std::string Zip64Extra(uint64_t size, uint64_t compressed) {
  std::string extra;
  Put16(extra, 0x0001);
  Put16(extra, 16);
  Put64(extra, size);
  Put64(extra, compressed);
  return extra;
}

}  // namespace

std::string ZeroBombNpz(std::string_view member, uint64_t elements) {
  const uint64_t data_bytes = elements * 4;
  if (data_bytes % kChunk != 0) std::abort();
  const std::string header =
      io::SerializeNpyHeader(DType::kFloat32, Shape::Of({static_cast<int64_t>(elements)}));
  z_stream stream{};
  // Raw deflate (no zlib header), as zip stores it.
  if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    std::abort();
  }
  const std::string zeros(kChunk, '\0');
  std::string compressed = Deflate(stream, header, Z_FULL_FLUSH);
  const std::string block = Deflate(stream, zeros, Z_FULL_FLUSH);
  // After a full flush deflate starts afresh, so the same input gives the same block again.
  if (Deflate(stream, zeros, Z_FULL_FLUSH) != block) std::abort();
  for (uint64_t chunk_idx = 0; chunk_idx < data_bytes / kChunk; ++chunk_idx) compressed += block;
  compressed += Deflate(stream, "", Z_FINISH);
  deflateEnd(&stream);

  uLong crc = crc32(0, reinterpret_cast<const Bytef*>(header.data()), header.size());
  const uLong zeros_crc = crc32(0, reinterpret_cast<const Bytef*>(zeros.data()), zeros.size());
  for (uint64_t chunk_idx = 0; chunk_idx < data_bytes / kChunk; ++chunk_idx) {
    crc = crc32_combine(crc, zeros_crc, static_cast<z_off_t>(kChunk));
  }
  const uint64_t size = header.size() + data_bytes;
  const std::string name = std::string(member) + ".npy";
  const std::string extra = Zip64Extra(size, compressed.size());

  std::string out = "PK\x03\x04";  // local file header (APPNOTE.TXT 4.3.7)
  for (uint32_t value : {45u, 0u, 8u, 0u, 0x21u}) Put16(out, value);  // zip64, deflate, 1980
  Put32(out, static_cast<uint32_t>(crc));
  Put32(out, 0xFFFFFFFFu);  // sizes in the zip64 extra field
  Put32(out, 0xFFFFFFFFu);
  Put16(out, static_cast<uint32_t>(name.size()));
  Put16(out, static_cast<uint32_t>(extra.size()));
  out += name + extra + compressed;

  std::string directory = "PK\x01\x02";  // central directory header (4.3.12)
  for (uint32_t value : {45u, 45u, 0u, 8u, 0u, 0x21u}) Put16(directory, value);
  Put32(directory, static_cast<uint32_t>(crc));
  Put32(directory, 0xFFFFFFFFu);
  Put32(directory, 0xFFFFFFFFu);
  for (uint32_t value :
       {static_cast<uint32_t>(name.size()), static_cast<uint32_t>(extra.size()), 0u, 0u, 0u}) {
    Put16(directory, value);  // name, extra, comment lengths, disk, internal attributes
  }
  Put32(directory, 0);  // external attributes
  Put32(directory, 0);  // local header offset
  directory += name + extra;

  const uint32_t directory_offset = static_cast<uint32_t>(out.size());
  out += directory + "PK\x05\x06";  // end of central directory (4.3.16)
  for (uint32_t value : {0u, 0u, 1u, 1u}) Put16(out, value);
  Put32(out, static_cast<uint32_t>(directory.size()));
  Put32(out, directory_offset);
  Put16(out, 0);
  return out;
}

}  // namespace convgate::testing
