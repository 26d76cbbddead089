"""What every element object has: to and from an ElementTree element."""

import abc
from xml.etree import ElementTree as ET


def sub(parent: ET.Element, tag: str, text=None, **attrs) -> ET.Element:
    """Append a child element; attributes whose value is None are left out.
    """
    element = ET.SubElement(
        parent, tag, {k: str(v) for k, v in attrs.items() if v is not None})
    if text is not None:
        element.text = str(text)
    return element


def text_of(parent: ET.Element, path: str, default=None):
    element = parent.find(path)
    if element is None or element.text is None:
        return default
    return element.text.strip()


class ConfigObject(abc.ABC):
    """Base of the element objects.

    Subclasses set ``root_name`` and implement ``format_dom`` and the
    class method ``parse_dom``.
    """

    root_name = ''

    @abc.abstractmethod
    def format_dom(self) -> ET.Element:
        """This object as an element named ``root_name``."""

    @classmethod
    @abc.abstractmethod
    def parse_dom(cls, element: ET.Element) -> 'ConfigObject':
        """The object an element describes (the inverse of format_dom)."""

    def to_xml(self) -> str:
        element = self.format_dom()
        ET.indent(element, space='  ')
        return ET.tostring(element, encoding='unicode') + '\n'

    @classmethod
    def from_xml(cls, xml: str) -> 'ConfigObject':
        element = ET.fromstring(xml)
        if element.tag != cls.root_name:
            raise ValueError('expected <%s>, got <%s>'
                             % (cls.root_name, element.tag))
        return cls.parse_dom(element)
