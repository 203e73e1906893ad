"""Each Lambda function's archive holds everything its module imports: it imports with the standard
library alone (no site-packages: no pydantic, no pulumi, no boto3 until the handler runs), as in the
Lambda runtime with only the archive."""

import subprocess
import sys
from pathlib import Path

import pytest

from components.compute import block_expiry_function
from components.compute.labels import CAPACITY_BLOCK_TAG, SPOT_ONLY
from components.compute.lambda_function import archive_files
from components.cost import breaker_function


@pytest.mark.parametrize(
    "module, name, expected",
    [(breaker_function, "SPOT_ONLY", SPOT_ONLY), (block_expiry_function, "CAPACITY_BLOCK_TAG", CAPACITY_BLOCK_TAG)],
)
def test_the_archive_imports_with_the_standard_library_alone(tmp_path, module, name, expected):
    for inside, source in archive_files(Path(module.__file__)).items():
        (tmp_path / inside).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / inside).write_bytes(source.read_bytes())
    stem = Path(module.__file__).stem
    done = subprocess.run(
        [sys.executable, "-S", "-c", f"import {stem}; print({stem}.{name}); {stem}.handler"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(expected)
