"""ASCII tables in the style operators know from novaclient (prettytable).

Example::

    >>> print(render(['ID', 'Name'], [['1', 'vm1']]))
    +----+------+
    | ID | Name |
    +----+------+
    | 1  | vm1  |
    +----+------+

Cells are left-aligned and may hold several lines; a table without rows
still shows its header.
"""

import json


def cell_text(value) -> str:
    """How a value looks in a cell: None as '-', containers as JSON."""
    if value is None:
        return '-'
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def render(headers, rows) -> str:
    """The table of ``rows`` (sequences of values) under ``headers``."""
    headers = [str(h) for h in headers]
    cells = [[cell_text(v).split('\n') for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for index, lines in enumerate(row):
            widths[index] = max(widths[index], *(len(line) for line in lines))
    border = '+' + '+'.join('-' * (w + 2) for w in widths) + '+'

    def line_of(values):
        return '| ' + ' | '.join(value.ljust(width) for value, width
                                 in zip(values, widths)) + ' |'

    out = [border, line_of(headers), border]
    for row in cells:
        height = max((len(lines) for lines in row), default=1)
        for number in range(height):
            out.append(line_of([lines[number] if number < len(lines) else ''
                                for lines in row]))
    out.append(border)
    return '\n'.join(out)


def render_dict(values: dict, property_label='Property',
                value_label='Value') -> str:
    """A two-column table of ``values``, sorted by key."""
    rows = []
    for key in sorted(values):
        rows.append([key, values[key]])
    return render([property_label, value_label], rows)
