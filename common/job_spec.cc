#include "common/job_spec.h"
