"""A two-collection shop, written for abstaingen's tests in the layout of a tau2-bench domain."""

from typing import List

from loguru import logger

from tau2.domains.shop.data_model import Order, ShopDB
from tau2.environment.toolkit import ToolKitBase, ToolType, is_tool


class ShopTools(ToolKitBase):
    """The shop's tools."""

    db: ShopDB

    def _order(self, order_id: str) -> Order:
        if order_id not in self.db.orders:
            raise ValueError("Order not found")
        return self.db.orders[order_id]

    @is_tool(ToolType.READ)
    def get_order(self, order_id: str) -> Order:
        """Get an order.

        Args:
            order_id: The order's id, such as 'O1'.

        Returns:
            The order.
        """
        return self._order(order_id)

    @is_tool(ToolType.READ)
    def list_orders(self, customer_id: str, statuses: List[str] = None) -> List[Order]:
        """List a customer's orders, optionally of some statuses only.

        Args:
            customer_id: The customer's id.
            statuses: Only orders in these statuses.
        """
        return [o for o in self.db.orders.values() if o.customer_id == customer_id
                and (not statuses or o.status in statuses)]

    @is_tool(ToolType.WRITE)
    def cancel_order(self, order_id: str, reason: str) -> Order:
        """Cancel a pending order.

        Args:
            order_id: The order's id.
            reason: Why, in the customer's words.
        """
        order = self._order(order_id)
        if order.status != "pending":
            raise ValueError("Only a pending order can be cancelled")
        order.status = "cancelled"
        order.note = reason
        logger.info(f"cancelled {order_id}")
        return order

    @is_tool(ToolType.WRITE)
    def change_address(self, customer_id: str, street: str, city: str, state: str) -> str:
        """Change a customer's address.

        Args:
            customer_id: The customer's id.
            street: The street and number.
            city: The city.
            state: The two-letter state code.
        """
        customer = self.db.customers[customer_id]
        customer.address.street, customer.address.city, customer.address.state = street, city, state
        return "address changed"

    @is_tool(ToolType.GENERIC)
    def add(self, a: float, b: float) -> float:
        """Add two numbers.

        Args:
            a: One number.
            b: The other.
        """
        return round(a + b, 2)

    def not_a_tool(self) -> str:
        return "tasks call me, agents do not"
