#include "store/postgres_error.h"

#include <exception>
#include <pqxx/except>

namespace convgate::store {
namespace {

// PostgreSQL's messages end in a newline and sometimes carry a tab-indented hint line.
std::string OneLine(std::string_view text) {
  std::string line;
  for (char c : text) line += (c == '\n' || c == '\t') ? ' ' : c;
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

Status Unavailable(const std::string& location, std::string_view what, std::string_view detail) {
  return Status::Unavailable("store " + location + ": " + std::string(what) + ": " +
                             OneLine(detail));
}

}  // namespace

Status CurrentPostgresError(const std::string& location, std::string_view what) {
  try {
    throw;
  } catch (const pqxx::broken_connection& error) {
    return Unavailable(location, what, std::string("connection failed: ") + error.what());
  } catch (const pqxx::sql_error& error) {
    // 55P03 lock_not_available (lock_timeout), 57014 query_canceled (statement_timeout).
    if (error.sqlstate() == "55P03" || error.sqlstate() == "57014") {
      return Unavailable(
          location, what,
          std::string(error.what()) + " (locked by another writer past the busy timeout)");
    }
    return Unavailable(location, what,
                       std::string(error.what()) + " (SQLSTATE " + error.sqlstate() + ")");
  } catch (const std::exception& error) {
    return Unavailable(location, what, error.what());
  }
}

}  // namespace convgate::store
