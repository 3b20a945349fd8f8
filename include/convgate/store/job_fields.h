// The job record's one description: each stored field of JobRecord (store.h) with its column in
// the jobs table and its key in the JSON that shows a job (summary.json, the Slurm summary,
// history --json). Both stores' INSERT and row reading, history's SELECT and the JSON are made
// from this list, in its order; a new field is one line here plus the stores' migration (an
// ALTER TABLE for the next schema version).
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "convgate/store/store.h"

namespace convgate::store {

struct JobField {
  const char* column;    // in the jobs table
  const char* json_key;  // in a job's JSON
  // Every field is NOT NULL in the table: text, an integer, or a real; a verdict is text
  // (VerdictName).
  std::variant<std::string JobRecord::*, int JobRecord::*, double JobRecord::*,
               Verdict JobRecord::*>
      member;
  // The text holds a JSON document, shown parsed (model_origin: the hub models' origins).
  bool json_text = false;
};

// In the order of the table's columns after run_id and id.
const std::vector<JobField>& JobFields();

// "entry_id, entry_key, ..." with each column prefixed by `alias` ("j." or "").
std::string JobColumnList(std::string_view alias);

}  // namespace convgate::store
