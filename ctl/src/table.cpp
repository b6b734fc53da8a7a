#include "table.hpp"

#include <algorithm>

namespace cqmgr::ctl {

Table::Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

void Table::add(std::vector<std::string> cells) {
    cells.resize(columns_.size());
    rows_.push_back(std::move(cells));
}

std::vector<std::string> Table::lines() const {
    std::vector<size_t> widths(columns_.size());
    for (size_t c = 0; c < columns_.size(); ++c) {
        widths[c] = display_width(columns_[c].title);
        for (const auto& row : rows_)
            widths[c] = std::max(widths[c], display_width(row[c]));
    }
    std::vector<std::string> out;
    std::vector<std::string> header;
    for (const auto& col : columns_)
        header.push_back(col.title);
    out.push_back(render(header, widths));
    for (const auto& row : rows_)
        out.push_back(render(row, widths));
    return out;
}

std::string Table::text() const {
    std::string out;
    for (const auto& line : lines())
        out += line + '\n';
    return out;
}

std::string Table::render(const std::vector<std::string>& cells,
                          const std::vector<size_t>& widths) const {
    std::string line;
    for (size_t c = 0; c < columns_.size(); ++c) {
        if (c > 0) line += "  ";
        const size_t pad = widths[c] - display_width(cells[c]);
        const bool last = c + 1 == columns_.size();
        if (columns_[c].align == Align::Right) {
            line.append(pad, ' ');
            line += cells[c];
        } else {
            line += cells[c];
            if (!last) line.append(pad, ' ');
        }
    }
    while (!line.empty() && line.back() == ' ')
        line.pop_back();
    return line;
}

size_t display_width(const std::string& text) {
    size_t n = 0;
    for (unsigned char ch : text)
        if ((ch & 0xC0) != 0x80) ++n;
    return n;
}

std::string fit_width(const std::string& text, size_t width) {
    size_t n = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
            if (n == width) return text.substr(0, i);
            ++n;
        }
    }
    return text;
}

} // namespace cqmgr::ctl
