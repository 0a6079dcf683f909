"""Return a pydantic model (or any JSON-able type hint) for structured output."""

from typing import Literal

from pydantic import BaseModel, Field

import django_mcp


class Forecast(BaseModel):
    city: str
    temperature_c: float = Field(description="Expected maximum, in degrees Celsius.")
    conditions: Literal["sunny", "cloudy", "rain"]


@django_mcp.tool(read_only=True)
def forecast(city: str) -> Forecast:
    """Tomorrow's weather for a city."""
    return Forecast(city=city, temperature_c=21.5, conditions="sunny")
