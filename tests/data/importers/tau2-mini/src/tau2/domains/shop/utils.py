from tau2.utils.utils import DATA_DIR

SHOP_DATA_DIR = DATA_DIR / "tau2" / "domains" / "shop"
SHOP_DB_PATH = SHOP_DATA_DIR / "db.json"
