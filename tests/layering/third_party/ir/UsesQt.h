// Fixture for core_layering_rejects_third_party: core/ is Qt-free.
#include <QString>
