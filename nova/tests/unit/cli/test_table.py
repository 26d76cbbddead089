"""The ASCII tables of the CLI."""

from nova.cli import table
from nova.tests import base


class RenderTest(base.TestCase):

    def test_list_table(self):
        text = table.render(
            ['ID', 'Name', 'Status', 'Task State', 'Power State',
             'Networks'],
            [['be6cb386-e005-4fb2-8332-7e0c375ee452', 'test-boot',
              'SHUTOFF', '-', 'Shutdown', 'public=172.24.4.8, 2001:db8::9']])
        self.assertEqual(
            '+--------------------------------------+-----------+---------+'
            '------------+-------------+--------------------------------+\n'
            '| ID                                   | Name      | Status  |'
            ' Task State | Power State | Networks                       |\n'
            '+--------------------------------------+-----------+---------+'
            '------------+-------------+--------------------------------+\n'
            '| be6cb386-e005-4fb2-8332-7e0c375ee452 | test-boot | SHUTOFF |'
            ' -          | Shutdown    | public=172.24.4.8, 2001:db8::9 |\n'
            '+--------------------------------------+-----------+---------+'
            '------------+-------------+--------------------------------+',
            text)

    def test_empty_table_keeps_its_header(self):
        self.assertEqual('+----+------+\n'
                         '| ID | Name |\n'
                         '+----+------+\n'
                         '+----+------+', table.render(['ID', 'Name'], []))

    def test_values(self):
        self.assertEqual('-', table.cell_text(None))
        self.assertEqual('False', table.cell_text(False))
        self.assertEqual('{"a": 1, "b": [2]}',
                         table.cell_text({'b': [2], 'a': 1}))

    def test_multi_line_cells(self):
        self.assertEqual('+---+-----+\n'
                         '| k | v   |\n'
                         '+---+-----+\n'
                         '| a | one |\n'
                         '|   | two |\n'
                         '+---+-----+', table.render(['k', 'v'],
                                                     [['a', 'one\ntwo']]))

    def test_dict_table_sorted(self):
        self.assertEqual('+----------+-------+\n'
                         '| Property | Value |\n'
                         '+----------+-------+\n'
                         '| a        | 1     |\n'
                         '| b        | -     |\n'
                         '+----------+-------+',
                         table.render_dict({'b': None, 'a': 1}))
