// One description per report.json record drives both directions. A record's fields are listed
// once, in a function template over the direction:
//
//   template <typename Io, typename Values>  // Values: ValueSummary, const when writing
//   void ValueFields(Io& io, Values& values) {
//     io.Number("min", values.min);
//     io.Count("nan", values.nan, Default<int64_t>(0));
//   }
//
// Writing (JsonWriter) puts each field into an object; reading (JsonReader) takes each back out of
// one, with the checks and messages of JsonFields. What a field does when it is left out is the
// third argument: written always and required (none), left out when it equals a value and filled
// back with it (Default), written always but filled when an older report lacks it (OrElse), or left
// out on a condition only the writer knows and filled with what the reader knows (LeftOutIf).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "convgate/core/status.h"
#include "report/json/reader.h"

namespace convgate::report::internal {

// JSON has no NaN/Inf: those become the strings "nan", "inf", "-inf"; finite values stay numbers.
nlohmann::json Number(double value);

// When a field may be absent.
template <typename T>
struct Absent {
  std::optional<T> fallback;   // reading: the value when the key is absent; none: it is required
  bool omit_fallback = false;  // writing: leave the key out when the value writes as `fallback`
  bool omit = false;           // writing: leave the key out
};
// Left out when it is `value`; read back as `value`.
template <typename T>
Absent<T> Default(T value) {
  return {std::move(value), true, false};
}
// Always written; `value` when a report written before the field existed lacks it.
template <typename T>
Absent<T> OrElse(T value) {
  return {std::move(value), false, false};
}
// Left out when `omitted` (the writer's knowledge); read back as `value` (the reader's).
template <typename T>
Absent<T> LeftOutIf(bool omitted, T value) {
  return {std::move(value), false, omitted};
}

// Parses what `name_of` spells for one of an enum's values, from its first (0) to `last`: the
// `parse` of Parsed for a contiguous enum with a name function.
template <typename Enum, typename NameOf>
auto ByName(NameOf name_of, Enum last) {
  return [=](const std::string& text) -> Result<Enum> {
    for (int value = 0; value <= static_cast<int>(last); ++value) {
      if (name_of(static_cast<Enum>(value)) == text) return static_cast<Enum>(value);
    }
    return Status::InvalidArgument("unknown name '" + text + "'");
  };
}

// The encodings of the field kinds, one place each.
nlohmann::json EncodeNumber(double value);
double DecodeNumber(const JsonFields& json, std::string_view key);
// An integer >= `lo` (a count: 0; a flat index or -1 for none: -1), at most `hi`.
int64_t DecodeInteger(const JsonFields& json, std::string_view key, int64_t lo, int64_t hi);
// A flat array of integers (the error summary's compact encodings).
std::vector<int64_t> DecodeIntArray(const JsonFields& json, std::string_view key);
// An element's coordinates: integers >= 0.
std::vector<int64_t> DecodeIndex(const JsonFields& json, std::string_view key);

// Whether a nested record must be there when reading.
enum class Presence {
  kRequired,
  kOptionalOnRead,    // always written; left as it is when an older report lacks it
  kOmittedWhenEmpty,  // arrays: not written when empty, read back empty when absent
};

class JsonWriter {
 public:
  static constexpr bool kReading = false;

  nlohmann::json& out() { return out_; }

  void Number(std::string_view key, double value, const Absent<double>& absent = {}) {
    Put(key, EncodeNumber(value), absent, [](double v) { return EncodeNumber(v); });
  }
  // A count (>= 0), or with `lo` -1 a flat index where -1 is none. int or int64_t.
  template <typename Int>
  void Count(std::string_view key, Int value, const Absent<Int>& absent = {}, int64_t lo = 0) {
    (void)lo;
    Put(key, nlohmann::json(value), absent, [](Int v) { return nlohmann::json(v); });
  }
  void Bool(std::string_view key, bool value, const Absent<bool>& absent = {}) {
    Put(key, nlohmann::json(value), absent, [](bool v) { return nlohmann::json(v); });
  }
  void Text(std::string_view key, const std::string& value,
            const Absent<std::string>& absent = {}) {
    Put(key, nlohmann::json(value), absent, [](const std::string& v) { return nlohmann::json(v); });
  }
  // A text, or null when empty.
  void TextOrNull(std::string_view key, const std::string& value) {
    out_[key] = value.empty() ? nlohmann::json(nullptr) : nlohmann::json(value);
  }
  void Texts(std::string_view key, const std::vector<std::string>& value,
             const Absent<std::vector<std::string>>& absent = {}) {
    Put(key, nlohmann::json(value), absent,
        [](const std::vector<std::string>& v) { return nlohmann::json(v); });
  }
  // Any integer (a width, a depth: the reader's caller checks the range).
  void Int(std::string_view key, int64_t value) { out_[key] = value; }
  // A number in [lo, hi] (a fraction).
  void NumberIn(std::string_view key, double value, double /*lo*/, double /*hi*/,
                const Absent<double>& absent = {}) {
    Number(key, value, absent);
  }
  // Integers: an element's coordinates (Index, >= 0) or a compact encoding (IntArray).
  void Index(std::string_view key, const std::vector<int64_t>& value) { out_[key] = value; }
  void IntArray(std::string_view key, const std::vector<int64_t>& value) { out_[key] = value; }
  void Ints(std::string_view key, const std::vector<int64_t>& value) { out_[key] = value; }
  // Finite numbers (latencies), written as they are.
  void Numbers(std::string_view key, const std::vector<double>& value) { out_[key] = value; }
  // Written when set; read back when present and not null.
  void OptionalNumber(std::string_view key, const std::optional<double>& value) {
    if (value) out_[key] = *value;
  }
  // A statistic that may be undefined: null when `undefined` or NaN (never the string "nan"). A
  // null reads back as 0 when `undefined` (what the statistic holds then), else as NaN.
  void NumberOrNull(std::string_view key, double value, bool undefined) {
    out_[key] = undefined || value != value ? nlohmann::json(nullptr) : EncodeNumber(value);
  }
  // A value spelled by `name(value)`, read back by `parse(text)` -> Result<T> (a statistic).
  template <typename T, typename Name, typename Parse>
  void Parsed(std::string_view key, const T& value, Name name, Parse /*parse*/,
              const Absent<T>& absent = {}) {
    if (absent.omit) return;
    out_[key] = std::string(name(value));
  }
  template <typename T, typename Name, typename Parse>
  void OptionalParsed(std::string_view key, const std::optional<T>& value, Name name,
                      Parse /*parse*/) {
    if (value) out_[key] = std::string(name(*value));
  }
  // A [lo, hi] pair of numbers (a value range).
  void Range(std::string_view key, double lo, double hi) {
    out_[key] = nlohmann::json::array({EncodeNumber(lo), EncodeNumber(hi)});
  }
  // A count, or a [lo, hi] bracket when it is not exact.
  template <typename Bracket>
  void CountOrBracket(std::string_view key, const Bracket& value) {
    out_[key] =
        value.exact() ? nlohmann::json(value.lo) : nlohmann::json::array({value.lo, value.hi});
  }
  // One of a closed set of names (a verdict, a kind).
  template <typename T>
  void Choice(std::string_view key, const T& value,
              std::initializer_list<std::pair<std::string_view, T>> names,
              const Absent<T>& /*absent*/ = {}) {
    for (const auto& [name, option] : names) {
      if (option == value) out_[key] = std::string(name);
    }
  }
  // A nested record, described by `fields(io, record)`.
  template <typename Record, typename Fields>
  void Object(std::string_view key, Record& record, Fields fields,
              Presence /*presence*/ = Presence::kRequired) {
    out_[key] = Write(record, fields);
  }
  // A nested record or null (`is_null`: the writer's test; the reader leaves the record as it is).
  template <typename Record, typename Fields>
  void ObjectOrNull(std::string_view key, Record& record, bool is_null, Fields fields) {
    out_[key] = is_null ? nlohmann::json(nullptr) : Write(record, fields);
  }
  // A record that may not be there: null.
  template <typename Record, typename Fields>
  void OptionalObject(std::string_view key, const std::optional<Record>& record, Fields fields) {
    out_[key] = record ? Write(*record, fields) : nlohmann::json(nullptr);
  }
  // An array of records.
  template <typename Record, typename Fields>
  void Objects(std::string_view key, const std::vector<Record>& records, Fields fields,
               Presence presence = Presence::kRequired) {
    if (presence == Presence::kOmittedWhenEmpty && records.empty()) return;
    nlohmann::json array = nlohmann::json::array();
    for (const Record& record : records) array.push_back(Write(record, fields));
    out_[key] = std::move(array);
  }
  // An array of a map's entries, each a record of its key and value (a std::pair).
  template <typename Key, typename Value, typename Fields>
  void Entries(std::string_view key, const std::map<Key, Value>& entries, Fields fields) {
    nlohmann::json array = nlohmann::json::array();
    for (const auto& [entry_key, value] : entries) {
      const std::pair<Key, Value> entry{entry_key, value};
      array.push_back(Write(entry, fields));
    }
    out_[key] = std::move(array);
  }
  // An object of records by name, or by a key `key_name` spells and `parse_key(name, json)`
  // reads back (throwing BadField).
  template <typename Record, typename Fields>
  void Map(std::string_view key, const std::map<std::string, Record>& records, Fields fields,
           Presence /*presence*/ = Presence::kRequired) {
    Map(
        key, records, fields, [](const std::string& name) { return name; }, nullptr);
  }
  template <typename Key, typename Record, typename Fields, typename KeyName, typename ParseKey>
  void Map(std::string_view key, const std::map<Key, Record>& records, Fields fields,
           KeyName key_name, ParseKey /*parse_key*/, Presence /*presence*/ = Presence::kRequired) {
    nlohmann::json object = nlohmann::json::object();
    for (const auto& [name, record] : records)
      object[std::string(key_name(name))] = Write(record, fields);
    out_[key] = std::move(object);
  }
  // A record written through a stored form: `to(value)` gives the form `fields` describes, and
  // `from(form, json)` the value back (throwing BadField at json when the form is inconsistent).
  template <typename Value, typename To, typename From, typename Fields>
  void Via(std::string_view key, const Value& value, To to, From /*from*/, Fields fields) {
    auto stored = to(value);
    out_[key] = Write(stored, fields);
  }
  // Texts by name (a JSON object of strings).
  void TextMap(std::string_view key, const std::map<std::string, std::string>& value) {
    out_[key] = value;
  }
  // A record described elsewhere: `write(value)` gives its JSON, `read(JsonFields)` the value back.
  template <typename Value, typename WriteFn, typename ReadFn>
  void Described(std::string_view key, const Value& value, WriteFn write, ReadFn /*read*/) {
    out_[key] = write(value);
  }
  // The same, or left out when there is none.
  template <typename Value, typename WriteFn, typename ReadFn>
  void DescribedIfAny(std::string_view key, const std::optional<Value>& value, WriteFn write,
                      ReadFn /*read*/) {
    if (value) out_[key] = write(*value);
  }
  // The same, or null when there is none.
  template <typename Value, typename WriteFn, typename ReadFn>
  void DescribedOrNull(std::string_view key, const std::optional<Value>& value, WriteFn write,
                       ReadFn /*read*/) {
    out_[key] = value ? write(*value) : nlohmann::json(nullptr);
  }
  // What the writer derives and the reader ignores (a rate from its counts, prose for people).
  void Derived(std::string_view key, nlohmann::json value) { out_[key] = std::move(value); }

  template <typename Record, typename Fields>
  static nlohmann::json Write(Record& record, Fields fields) {
    JsonWriter writer;
    fields(writer, record);
    return std::move(writer.out_);
  }

 private:
  template <typename T, typename Encode>
  void Put(std::string_view key, nlohmann::json value, const Absent<T>& absent, Encode encode) {
    if (absent.omit) return;
    if (absent.omit_fallback && absent.fallback && value == encode(*absent.fallback)) return;
    out_[key] = std::move(value);
  }

  nlohmann::json out_ = nlohmann::json::object();
};

class JsonReader {
 public:
  static constexpr bool kReading = true;

  explicit JsonReader(const JsonFields& json) : json_(json) {}
  const JsonFields& fields() const { return json_; }

  void Number(std::string_view key, double& value, const Absent<double>& absent = {}) {
    if (Fallback(key, value, absent)) return;
    value = DecodeNumber(json_, key);
  }
  template <typename Int>
  void Count(std::string_view key, Int& value, const Absent<Int>& absent = {}, int64_t lo = 0) {
    if (Fallback(key, value, absent)) return;
    value = static_cast<Int>(DecodeInteger(json_, key, lo, std::numeric_limits<Int>::max()));
  }
  void Bool(std::string_view key, bool& value, const Absent<bool>& absent = {}) {
    if (Fallback(key, value, absent)) return;
    value = json_.Bool(key);
  }
  void Text(std::string_view key, std::string& value, const Absent<std::string>& absent = {}) {
    if (Fallback(key, value, absent)) return;
    value = json_.String(key);
  }
  void TextOrNull(std::string_view key, std::string& value) {
    value = json_.Raw(key).is_null() ? "" : json_.String(key);
  }
  void Texts(std::string_view key, std::vector<std::string>& value,
             const Absent<std::vector<std::string>>& absent = {}) {
    if (Fallback(key, value, absent)) return;
    value = json_.Strings(key);
  }
  void Int(std::string_view key, int64_t& value) { value = json_.Int(key); }
  void NumberIn(std::string_view key, double& value, double lo, double hi,
                const Absent<double>& absent = {}) {
    if (Fallback(key, value, absent)) return;
    value = json_.NumberIn(key, lo, hi);
  }
  void Index(std::string_view key, std::vector<int64_t>& value) { value = DecodeIndex(json_, key); }
  void IntArray(std::string_view key, std::vector<int64_t>& value) {
    value = DecodeIntArray(json_, key);
  }
  void Ints(std::string_view key, std::vector<int64_t>& value) { value = json_.Ints(key); }
  void Numbers(std::string_view key, std::vector<double>& value) { value = json_.Numbers(key); }
  void OptionalNumber(std::string_view key, std::optional<double>& value) {
    value = json_.OptionalNumber(key);
  }
  void NumberOrNull(std::string_view key, double& value, bool undefined) {
    if (!json_.Raw(key).is_null()) {
      value = DecodeNumber(json_, key);
    } else {
      value = undefined ? 0.0 : std::numeric_limits<double>::quiet_NaN();
    }
  }
  template <typename T, typename Name, typename Parse>
  void Parsed(std::string_view key, T& value, Name /*name*/, Parse parse,
              const Absent<T>& absent = {}) {
    if (Fallback(key, value, absent)) return;
    value = ParseOrFail(key, parse);
  }
  template <typename T, typename Name, typename Parse>
  void OptionalParsed(std::string_view key, std::optional<T>& value, Name /*name*/, Parse parse) {
    if (json_.Has(key)) value = ParseOrFail(key, parse);
  }
  void Range(std::string_view key, double& lo, double& hi) {
    const nlohmann::json& raw = json_.Raw(key);
    if (!raw.is_array() || raw.size() != 2) json_.Fail(key, "expected a [lo, hi] pair");
    lo = NumberFrom(raw[0], json_.Child(key) + "[0]");
    hi = NumberFrom(raw[1], json_.Child(key) + "[1]");
  }
  template <typename Bracket>
  void CountOrBracket(std::string_view key, Bracket& value) {
    if (!json_.Has(key)) return;  // older reports: left as it is
    const nlohmann::json& raw = json_.Raw(key);
    if (raw.is_array() && raw.size() == 2 && raw[0].is_number_integer() &&
        raw[1].is_number_integer() && raw[0] <= raw[1]) {
      value = {raw[0].get<int64_t>(), raw[1].get<int64_t>()};
      return;
    }
    if (!raw.is_number_integer()) json_.Fail(key, "expected a count or a [lo, hi] bracket");
    const int64_t count = DecodeInteger(json_, key, 0, std::numeric_limits<int64_t>::max());
    value = {count, count};
  }
  template <typename T>
  void Choice(std::string_view key, T& value,
              std::initializer_list<std::pair<std::string_view, T>> names,
              const Absent<T>& absent = {}) {
    if (Fallback(key, value, absent)) return;
    std::vector<std::string_view> allowed;
    for (const auto& option : names) allowed.push_back(option.first);
    const std::string name = json_.OneOf(key, allowed);
    for (const auto& [option_name, option] : names) {
      if (option_name == name) value = option;
    }
  }
  template <typename Record, typename Fields>
  void Object(std::string_view key, Record& record, Fields fields,
              Presence presence = Presence::kRequired) {
    if (presence == Presence::kOptionalOnRead && !json_.Has(key)) return;
    JsonReader child(json_.Object(key));
    fields(child, record);
  }
  template <typename Record, typename Fields>
  void ObjectOrNull(std::string_view key, Record& record, bool /*is_null*/, Fields fields) {
    if (json_.Raw(key).is_null()) return;
    Object(key, record, fields);
  }
  template <typename Record, typename Fields>
  void OptionalObject(std::string_view key, std::optional<Record>& record, Fields fields) {
    record.reset();
    if (json_.Raw(key).is_null()) return;
    Object(key, record.emplace(), fields);
  }
  template <typename Record, typename Fields>
  void Objects(std::string_view key, std::vector<Record>& records, Fields fields,
               Presence presence = Presence::kRequired) {
    records.clear();
    if (presence != Presence::kRequired && !json_.Has(key)) return;
    for (const JsonFields& item : json_.Objects(key)) {
      JsonReader child(item);
      fields(child, records.emplace_back());
    }
  }
  template <typename Key, typename Value, typename Fields>
  void Entries(std::string_view key, std::map<Key, Value>& entries, Fields fields) {
    entries.clear();
    for (const JsonFields& item : json_.Objects(key)) {
      std::pair<Key, Value> entry{};
      Read(item, entry, fields);
      entries[entry.first] = entry.second;
    }
  }
  template <typename Record, typename Fields>
  void Map(std::string_view key, std::map<std::string, Record>& records, Fields fields,
           Presence presence = Presence::kRequired) {
    Map(
        key, records, fields, nullptr,
        [](const std::string& name, const JsonFields&) { return name; }, presence);
  }
  template <typename Key, typename Record, typename Fields, typename KeyName, typename ParseKey>
  void Map(std::string_view key, std::map<Key, Record>& records, Fields fields,
           KeyName /*key_name*/, ParseKey parse_key, Presence presence = Presence::kRequired) {
    if (presence == Presence::kOptionalOnRead && !json_.Has(key)) return;
    const JsonFields object = json_.Object(key);
    records.clear();
    for (const auto& [name, value] : object.object().items()) {
      JsonReader child(JsonFields(value, object.Child(name)));
      fields(child, records[parse_key(name, object)]);
    }
  }
  template <typename Value, typename To, typename From, typename Fields>
  void Via(std::string_view key, Value& value, To to, From from, Fields fields) {
    const JsonFields json = json_.Object(key);
    std::decay_t<decltype(to(value))> stored{};
    Read(json, stored, fields);
    value = from(stored, json);
  }
  void TextMap(std::string_view key, std::map<std::string, std::string>& value) {
    const JsonFields object = json_.Object(key);
    value.clear();
    for (const auto& item : object.object().items()) value[item.key()] = object.String(item.key());
  }
  template <typename Value, typename WriteFn, typename ReadFn>
  void Described(std::string_view key, Value& value, WriteFn /*write*/, ReadFn read) {
    value = read(json_.Object(key));
  }
  template <typename Value, typename WriteFn, typename ReadFn>
  void DescribedIfAny(std::string_view key, std::optional<Value>& value, WriteFn /*write*/,
                      ReadFn read) {
    value.reset();
    if (json_.Has(key)) value = read(json_.Object(key));
  }
  template <typename Value, typename WriteFn, typename ReadFn>
  void DescribedOrNull(std::string_view key, std::optional<Value>& value, WriteFn /*write*/,
                       ReadFn read) {
    value.reset();
    if (!json_.Raw(key).is_null()) value = read(json_.Object(key));
  }
  void Derived(std::string_view /*key*/, const nlohmann::json& /*value*/) {}

  bool Has(std::string_view key) const { return json_.Has(key); }

  template <typename Record, typename Fields>
  static void Read(const JsonFields& json, Record& record, Fields fields) {
    JsonReader reader(json);
    fields(reader, record);
  }
  // A new Record read from `json`.
  template <typename Record, typename Fields>
  static Record Read(const JsonFields& json, Fields fields) {
    Record record{};
    Read(json, record, fields);
    return record;
  }

 private:
  template <typename Parse>
  auto ParseOrFail(std::string_view key, Parse parse) const {
    auto parsed = parse(json_.String(key));
    if (!parsed.ok()) json_.Fail(key, parsed.status().message());
    return std::move(parsed).value();
  }

  // True when the key is absent and `value` took the fallback; absent and required fails.
  template <typename T>
  bool Fallback(std::string_view key, T& value, const Absent<T>& absent) const {
    if (json_.Has(key)) return false;
    if (!absent.fallback) json_.Fail(key, "missing");
    value = *absent.fallback;
    return true;
  }

  JsonFields json_;
};

}  // namespace convgate::report::internal
