from typing import Dict, List, Literal, Optional

from pydantic import BaseModel, Field

from tau2.domains.shop.utils import SHOP_DB_PATH
from tau2.environment.db import DB
from tau2.utils.pydantic_utils import BaseModelNoExtra


class Address(BaseModel):
    street: str
    city: str
    state: str


class Customer(BaseModelNoExtra):
    customer_id: str
    name: str
    address: Address
    orders: List[str] = Field(default_factory=list)


class Order(BaseModel):
    order_id: str
    customer_id: str
    status: Literal["pending", "shipped", "cancelled"]
    total: float
    note: Optional[str] = None


class ShopDB(DB):
    customers: Dict[str, Customer] = Field(description="customers by id")
    orders: Dict[str, Order] = Field(description="orders by id")

    def default_path(self) -> str:
        return str(SHOP_DB_PATH)
