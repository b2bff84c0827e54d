"""A household pantry: what is in it, whose it is, and how much is left."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from abstention_factory.runtime.base import BaseEnvironment, ToolError

from .schema import Item


class PantryEnvironment(BaseEnvironment):
    """The pantry of a shared flat: items by owner, with the quantity left and whether they were thrown out."""

    env_name = "pantry"
    short_name = "Pantry"
    tool_kinds = {"list_items": "read", "get_item": "read", "use_item": "write", "discard_item": "write",
                  "restore_item": "write"}
    mutation_tools = {"use_item", "discard_item", "restore_item"}
    mutation_id_fields = {"item_id"}

    def _load_state(self, initial_state: dict[str, Any]) -> dict[str, Any]:
        return {"items": [Item(**item) for item in initial_state["items"]]}

    @classmethod
    def get_example_state(cls) -> dict[str, Any]:
        return {"items": [{"id": "I9", "item_id": "I9", "name": "Salt", "owner": "Mia", "quantity": 1,
                           "status": "in_pantry"}]}

    @classmethod
    def get_state_schema(cls) -> dict[str, Any]:
        return {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "object"}}},
                "required": ["items"]}

    def _item(self, item_id: str) -> Item:
        for item in self.state["items"]:
            if item.item_id == item_id:
                return item
        raise ToolError(f"No item {item_id}")

    def _register_tools(self) -> None:
        @self.mcp.tool()
        def list_items(owner: Annotated[str, Field(description="whose items, e.g. Mia")]) -> list[dict]:
            """List an owner's items in the pantry."""
            found = [item.to_dict() for item in self.state["items"] if item.owner == owner]
            self._log_tool_call("list_items", {"owner": owner}, found)
            return found

        @self.mcp.tool(name="get_item")
        async def item_details(item_id: str) -> dict:
            """Get one item.

            Args:
                item_id: the item's id, e.g. I1
            """
            item = self._item(item_id).to_dict()
            self._log_tool_call("get_item", {"item_id": item_id}, item)
            return item

        @self.mcp.tool(description="Use some of an item; the quantity left goes down.")
        def use_item(item_id: str, quantity: int = 1) -> dict:
            item = self._item(item_id)
            if item.status != "in_pantry" or quantity > item.quantity:
                self._log_tool_call("use_item", {"item_id": item_id, "quantity": quantity}, None, success=False,
                                    error="not enough left")
                raise ToolError(f"Not enough of {item_id} left")
            item.quantity -= quantity
            self._log_tool_call("use_item", {"item_id": item_id, "quantity": quantity}, item.to_dict())
            return item.to_dict()

        @self.mcp.tool()
        def discard_item(item_id: str) -> dict:
            """Throw an item out."""
            item = self._item(item_id)
            if item.status != "in_pantry":
                raise ToolError(f"{item_id} is not in the pantry")
            item.status = "discarded"
            self._log_tool_call("discard_item", {"item_id": item_id}, item.to_dict())
            return item.to_dict()

        @self.mcp.tool()
        def restore_item(item_id: str) -> dict:
            """Put a discarded item back."""
            item = self._item(item_id)
            if item.status != "discarded":
                raise ToolError(f"{item_id} was not discarded")
            item.status = "in_pantry"
            self._log_tool_call("restore_item", {"item_id": item_id}, item.to_dict())
            return item.to_dict()
