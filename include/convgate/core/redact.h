// Secrets kept out of everything convgate records or prints: database passwords in connection
// strings (URL userinfo, password=... parameters and keywords) and the hub token given on the
// command line. Every writer of a command line (report.json's argv, a store's runs.argv, --json on
// stdout, a batch's run row) takes it through RedactCommandLine, once, where the command line is
// read (cli/command_line.cc); store locations in messages go through store::RedactStoreLocation,
// which uses RedactPasswords.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace convgate {

// What a secret is replaced with.
inline constexpr std::string_view kRedacted = "***";

// `text` with the password of every URL's userinfo ("scheme://user:SECRET@host", the last '@'
// before the query ending the userinfo, so an unencoded '@' in the password stays inside what is
// redacted), and the value of every password=VALUE (a URL query parameter ended by '&', or a
// libpq keyword at the start of a word ended by white space, '...' quoting with backslash escapes
// included) replaced with "***". Text without a password comes back unchanged.
std::string RedactPasswords(std::string text);

// A command line with every secret replaced: RedactPasswords on every argument, and the whole
// value of the flags that are secrets themselves (--token VALUE, --token=VALUE).
std::vector<std::string> RedactCommandLine(const std::vector<std::string>& argv);

}  // namespace convgate
