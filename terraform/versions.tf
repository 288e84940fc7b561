terraform {
  required_version = ">= 1.6, < 2.0"

  required_providers {
    google = {
      source = "hashicorp/google"
      # Exact pins: tests/terraform/test_schema.py checks terraform/ against this version's
      # schema (provider_schema/), and a range would let init take an unchecked one. Moving
      # it means regenerating that schema (scripts/provider_schema.py). Direct VPC egress on
      # Cloud Functions gen2 needs 7.21 or newer.
      version = "= 7.46.1"
    }
    google-beta = {
      source  = "hashicorp/google-beta"
      version = "= 7.46.1"
    }
    random = {
      source  = "hashicorp/random"
      version = "~> 3.7"
    }
    archive = {
      source  = "hashicorp/archive"
      version = "~> 2.7"
    }
  }

  # Partial configuration: bucket and prefix come from envs/<env>.gcs.tfbackend
  # (`make plan ENV=<env>` passes it to `terraform init -backend-config`).
  backend "gcs" {}
}

provider "google" {
  project = var.project_id
  region  = var.region
  # The budget API bills its calls to a quota project.
  user_project_override = true
  billing_project       = var.project_id
  default_labels = {
    app         = var.name_prefix
    environment = var.environment
  }
}

provider "google-beta" {
  project               = var.project_id
  region                = var.region
  user_project_override = true
  billing_project       = var.project_id
  default_labels = {
    app         = var.name_prefix
    environment = var.environment
  }
}

data "google_project" "this" {
  project_id = var.project_id
}
