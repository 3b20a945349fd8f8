// Where each member's data starts in a zip archive held in memory, read from the central directory
// and the local headers. libzip reads and checks the archive; it has no call that gives a member's
// offset, which a reader needs to use a stored member where it lies (an .npz mapped in memory).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace convgate::io::internal {

struct ZipMemberData {
  uint64_t offset = 0;  // of the member's first data byte in the archive
  uint64_t size = 0;    // compressed (for a stored member: its bytes)
};

// One entry per central directory record, in directory order (libzip's index order), zip64
// included. nullopt when anything does not parse or points outside `archive`: the caller then
// reads through libzip, which says what is wrong. An entry's name is not checked here; the caller
// compares sizes with libzip's.
std::optional<std::vector<ZipMemberData>> ZipMemberOffsets(std::span<const std::byte> archive);

}  // namespace convgate::io::internal
