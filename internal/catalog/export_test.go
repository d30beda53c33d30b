package catalog

// VendorSelect is the vendor list's query, for the plan test.
const VendorSelect = vendorSelect
