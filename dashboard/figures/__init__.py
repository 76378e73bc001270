"""The dashboard's Plotly figures, one module per page; dashboard.charts names them."""
