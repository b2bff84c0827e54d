"""The pantry's records, as the environment keeps them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Item:
    id: str
    item_id: str
    name: str
    owner: str
    quantity: int
    status: str

    def to_dict(self) -> dict:
        return {"id": self.id, "item_id": self.item_id, "name": self.name, "owner": self.owner,
                "quantity": self.quantity, "status": self.status}
