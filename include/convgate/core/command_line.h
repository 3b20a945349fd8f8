// Command templates given as one string on the command line (--source-exec 'python3 run.py
// {model} {inputs} {outputs}'), split into argv without a shell: nothing is expanded, globbed or
// redirected, so a template means the same on every machine and cannot inject commands.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "convgate/core/status.h"

namespace convgate {

// Splits `text` into words with these rules (a subset of POSIX sh quoting, no expansion):
//  - unquoted spaces, tabs and newlines separate words;
//  - '...' groups everything up to the next ' literally (no escapes inside);
//  - "..." groups up to the next unescaped "; inside, \" and \\ stand for " and \, and any other
//    backslash is kept as written;
//  - outside quotes, a backslash makes the next character literal (\  is a space in a word);
//  - quoted parts join the unquoted text around them into one word ('a'b"c" is abc), and '' or ""
//    alone is an empty word;
//  - $, ~, *, ?, |, ;, <, > and the like are ordinary characters.
// InvalidArgument for an unterminated quote, a trailing lone backslash, or no words at all.
Result<std::vector<std::string>> SplitCommandLine(std::string_view text);

// The words joined by spaces, each quoted with '...' when it holds anything but
// [A-Za-z0-9_./:=@%+,{}-], so the result splits back into the same words. For messages and
// reports.
std::string JoinCommandLine(const std::vector<std::string>& argv);

}  // namespace convgate
