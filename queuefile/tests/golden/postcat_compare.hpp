// Comparing what the queuefile library reads from a queue file with what
// Postfix's own postcat(1) printed for the same file ("postcat -o -v -e" and
// "postcat -o -e", run with TZ=UTC).  Used by the fixture tests and by the
// live golden test (qf_golden).
#pragma once

#include "cqmgr/queuefile/error.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cqmgr::queuefile::golden {

// One line of postcat -o output: "%9lu name: value" or "%9lu *** TEXT path ***".
struct PostcatLine {
    int64_t offset = -1; // -1 for the first marker, which has no offset
    bool marker = false; // a "*** ... ***" line; name holds the text without the path
    std::string name;
    std::string value;
};

// Parses postcat -o output.  Lines that fit neither form are returned as a
// line with name "?" and the whole text as value, so that they show up as
// differences.
std::vector<PostcatLine> parse_postcat(const std::string& text);

// Our rendering of a file: the lines, and what stopped the reading early.
struct Rendered {
    std::vector<PostcatLine> lines;
    std::optional<FileError> failure; // the file cannot be opened, or is damaged
};

// Renders the records of the queue file at `path` the way postcat -o -e
// (verbose: with -v) prints them, using RecordWalker.  Times use localtime,
// so the caller sets TZ like postcat's.  On damage, the lines read so far
// come with the failure.
Rendered render_like_postcat(const std::string& path, bool verbose);

// Line-by-line differences between postcat's lines and ours (empty: equal).
std::vector<std::string> diff_lines(const std::vector<PostcatLine>& postcat,
                                    const std::vector<PostcatLine>& ours);

// Reads the file with read_envelope() in batches of `batch` recipients and
// compares every envelope field qmgr uses with what postcat -v printed:
// SIZE fields, arrival and create time, sender, each recipient (offset,
// address, original recipient, DSN original recipient, NOTIFY flags),
// DSN envelope id and RET, VERP, content filter, redirect, inspector,
// encoding, rewrite context, trace flags and their offset, warning time and
// its offset, client and SASL attributes, recipient count.  Returns the
// differences (empty: equal).
std::vector<std::string> compare_envelope(const std::string& path,
                                          const std::vector<PostcatLine>& postcat_verbose,
                                          int batch);

// Loads a whole file; throws std::runtime_error naming it on failure.
std::string slurp(const std::string& path);

// Runs all comparisons for one file and its two postcat outputs; returns the
// differences, each prefixed with the comparison's name.
std::vector<std::string> compare_all(const std::string& qf, const std::string& postcat_verbose,
                                     const std::string& postcat_plain, int batch);

} // namespace cqmgr::queuefile::golden
