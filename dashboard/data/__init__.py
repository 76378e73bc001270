"""The dashboard's data loaders, one module per page; dashboard.queries names them."""
