// Where a hub model came from (hub::ModelOrigin) in report.json's header ("model_origins"),
// verify_result.json, summary.json and the store: one description, read back through the same one.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "convgate/hub/hub.h"
#include "report/json/codec.h"

namespace convgate::report::internal {

nlohmann::json ModelOriginJson(const hub::ModelOrigin& origin);
// Throws BadField.
hub::ModelOrigin ModelOriginFromJson(const JsonFields& json);

// "model_origins" of a header: written only when there are any, absent read back as none.
template <typename Io, typename Origins>
void ModelOriginsField(Io& io, Origins& origins) {
  if constexpr (Io::kReading) {
    origins.clear();
    if (!io.fields().Has("model_origins")) return;
    for (const JsonFields& item : io.fields().Objects("model_origins")) {
      origins.push_back(ModelOriginFromJson(item));
    }
  } else {
    if (origins.empty()) return;
    nlohmann::json array = nlohmann::json::array();
    for (const hub::ModelOrigin& origin : origins) array.push_back(ModelOriginJson(origin));
    io.Derived("model_origins", std::move(array));
  }
}

}  // namespace convgate::report::internal
