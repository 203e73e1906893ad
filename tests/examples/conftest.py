"""The model bucket (moto), as the platform's publishing tests make it."""

from tests.seedance.test_model_publish import s3  # noqa: F401 (fixture)
