"""The Spot Instance Advisor's data (https://aws.amazon.com/ec2/spot/instance-advisor/; no API serves it):
each type's interruption band in a region, read the same way from the live feed and the bundled cut. Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ValidationError

from components.pricing.prices import InterruptionFrequency


def band_upper_edge(label: str) -> float:
    """A band's monthly interruption share at its upper edge; the open top band counts as 100 %."""
    bounds = [float(n) for n in re.findall(r"\d+(?:\.\d+)?", label)]
    if not bounds or label.strip().startswith(">"):
        return 1.0
    return max(bounds) / 100


class _AdvisorBand(BaseModel):
    index: int
    label: str


class _AdvisorPool(BaseModel):
    r: int  # index into `ranges`; the document also carries "s", the saving over on-demand


class _AdvisorDocument(BaseModel):
    """The parts of the advisor's data read here; a document of another shape is refused (ValueError)."""

    ranges: list[_AdvisorBand]
    spot_advisor: dict[str, dict[str, dict[str, _AdvisorPool]]]  # region -> OS -> instance type


def interruption_frequencies(
    document: Any, region: str, instance_types: Sequence[str], now: datetime
) -> dict[str, InterruptionFrequency]:
    """Each listed type's band in the region, for Linux; types the advisor does not list are left out.
    Raises ValueError for a document that is not shaped as the advisor's."""
    try:
        advisor = _AdvisorDocument.model_validate(document)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "document"
        raise ValueError(f"{where}: {first['msg']}") from None
    labels = {band.index: band.label for band in advisor.ranges}
    linux = advisor.spot_advisor.get(region, {}).get("Linux", {})
    frequencies = {}
    for instance_type in instance_types:
        if instance_type not in linux:
            continue
        label = labels.get(linux[instance_type].r)
        if label is None:
            raise ValueError(f"{instance_type}: band {linux[instance_type].r} is not among the advisor's ranges")
        frequencies[instance_type] = InterruptionFrequency(
            band_upper_edge(label), now, f"Spot Instance Advisor, band {label}"
        )
    return frequencies
