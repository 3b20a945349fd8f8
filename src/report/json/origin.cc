#include "report/json/origin.h"

#include <cstdint>
#include <string>

#include "convgate/report/report.h"

namespace convgate::report::internal {
namespace {

const Absent<std::string> kOmittedWhenEmpty = Default<std::string>("");

template <typename Io, typename Origin>
void OriginFields(Io& io, Origin& origin) {
  io.Text("uri", origin.uri);
  io.Text("repo_id", origin.repo_id);
  io.Text("revision", origin.revision);
  io.Text("commit", origin.commit);
  io.Text("file", origin.file);
  io.Text("etag", origin.etag);
  // Through int64: the codec's counts are signed, and no file is 2^63 bytes.
  int64_t size = static_cast<int64_t>(origin.size);
  io.Count("size", size);
  if constexpr (Io::kReading) origin.size = static_cast<uint64_t>(size);
  io.Text("how", origin.how);
  io.Texts("converted_from", origin.converted_from, Default(std::vector<std::string>{}));
  io.Text("converter", origin.converter, kOmittedWhenEmpty);
  io.Text("converter_version", origin.converter_version, kOmittedWhenEmpty);
  io.Bool("conversion_cache_hit", origin.conversion_cache_hit, Default(false));
  io.Text("conversion_task", origin.conversion_task, kOmittedWhenEmpty);
}

const auto kOriginFields = [](auto& io, auto& origin) { OriginFields(io, origin); };

}  // namespace

nlohmann::json ModelOriginJson(const hub::ModelOrigin& origin) {
  return JsonWriter::Write(origin, kOriginFields);
}

hub::ModelOrigin ModelOriginFromJson(const JsonFields& json) {
  return JsonReader::Read<hub::ModelOrigin>(json, kOriginFields);
}

}  // namespace convgate::report::internal

namespace convgate::report {

nlohmann::json ModelOriginsJson(const std::vector<hub::ModelOrigin>& origins) {
  nlohmann::json array = nlohmann::json::array();
  for (const hub::ModelOrigin& origin : origins) array.push_back(internal::ModelOriginJson(origin));
  return array;
}

Result<std::vector<hub::ModelOrigin>> ModelOriginsFromJson(const nlohmann::json& array) {
  if (!array.is_array()) return Status::InvalidArgument("model origins: not a JSON array");
  std::vector<hub::ModelOrigin> origins;
  try {
    for (size_t item_idx = 0; item_idx < array.size(); ++item_idx) {
      const nlohmann::json& item = array[item_idx];
      const std::string path = "model_origins[" + std::to_string(item_idx) + "]";
      if (!item.is_object()) return Status::InvalidArgument(path + ": not an object");
      origins.push_back(internal::ModelOriginFromJson(internal::JsonFields(item, path)));
    }
  } catch (const internal::BadField& bad) {
    return Status::InvalidArgument(bad.path + ": " + bad.what);
  }
  return origins;
}

std::string ModelOriginText(const hub::ModelOrigin& origin) {
  std::string text = origin.uri + ": ";
  if (origin.how == "converted") {
    std::string from;
    for (const std::string& file : origin.converted_from) from += (from.empty() ? "" : ", ") + file;
    text += "converted from " + from + " of " + origin.repo_id + " at commit " + origin.commit +
            " by " + origin.converter +
            (origin.converter_version.empty() ? "" : " " + origin.converter_version) +
            (origin.conversion_task.empty() ? "" : ", task " + origin.conversion_task) +
            (origin.conversion_cache_hit ? " (conversion cache hit)" : "");
  } else {
    text += origin.repo_id + " at " + origin.revision + " = commit " + origin.commit + ", " +
            (origin.how == "downloaded" ? "downloaded now" : "from the cache");
  }
  if (!origin.etag.empty()) text += ", etag " + origin.etag;
  return text;
}

}  // namespace convgate::report
